# Hostile submission: forks processes without end (safety cap 400 in case no limit holds).
import os
import time

n = 0
try:
    while n < 400:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        n += 1
except OSError as exc:
    print(f"forked {n} then {type(exc).__name__}")
else:
    print(f"forked {n} without a limit")
