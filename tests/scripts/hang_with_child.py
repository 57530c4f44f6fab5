"""Hangs forever after starting a child process; writes the child's pid next to itself."""
import subprocess
import sys
import time
from pathlib import Path

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
Path(sys.argv[1]).write_text(str(child.pid))
print("started child", child.pid, flush=True)
while True:
    time.sleep(1)
