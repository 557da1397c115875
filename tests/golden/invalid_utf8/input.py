# café in latin-1
x = "café"
