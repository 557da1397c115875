import os

x = 1	# tab
print(x)