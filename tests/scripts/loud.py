"""Prints about 20 MB, then fails with a clear error on the last line."""
import sys

line = "x" * 1023 + "\n"
for _ in range(20 * 1024):
    sys.stdout.write(line)
raise RuntimeError("done printing")
