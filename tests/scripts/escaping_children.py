"""Starts processes that leave the run's process group: a `sleep 322` in its own session
(start_new_session=True, as `setsid` does) and a double-forked daemon; writes their pids,
one a line, to argv[1]; then sleeps argv[2] seconds (default: ends at once)."""
import os
import subprocess
import sys
import time
from pathlib import Path

pids = Path(sys.argv[1])
sleeper = subprocess.Popen(["sleep", "322"], start_new_session=True)
read, write = os.pipe()
first = os.fork()
if first == 0:  # the daemon: a new session, then a second fork so its parent is gone
    os.setsid()
    if os.fork():
        os._exit(0)
    os.write(write, str(os.getpid()).encode())
    time.sleep(600)
    os._exit(0)
os.waitpid(first, 0)
daemon = int(os.read(read, 32))
pids.write_text(f"{sleeper.pid}\n{daemon}\n")
print("started", sleeper.pid, daemon, flush=True)
if len(sys.argv) > 2:
    time.sleep(float(sys.argv[2]))
