# Reliability targets (fuzzing, sanitizers, valgrind); owned by the reliability work.
