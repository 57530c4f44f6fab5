"""Processes of a run, for the two programs that own one: the run supervisor
(``autofix/run/supervisor.py``) and the warm interpreter's zygote (``zygote.py``).

Standard library only. Both are executed by path (``python -I``), so each loads this file
by path under the private name ``_autofix_procs``, never as a top-level module a user's
script could shadow or find in ``sys.modules``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys


def children_of(pids: set[int]) -> set[int]:
    """The processes whose parent is in ``pids`` (one scan of ``/proc``)."""
    found = set()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) in pids:
            found.add(int(entry.name))
    return found


def descendants() -> set[int]:
    """Every living descendant of this process (children, theirs, ...)."""
    me = os.getpid()
    seen: set[int] = set()
    frontier = {me}
    while frontier:
        frontier = children_of(frontier) - seen - {me}
        seen |= frontier
    return seen


def exit_like(status: int | None) -> None:
    """End this process as the command ended (``status``: its wait status; ``None``:
    unknown, exit 1): the same exit code, or the same signal (no core dump of its own)."""
    sys.stdout.flush()
    if status is None:
        os._exit(1)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        import resource

        with contextlib.suppress(OSError, ValueError):
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the command dumped already
        with contextlib.suppress(OSError, ValueError):  # SIGKILL/SIGSTOP have no handler
            signal.signal(sig, signal.SIG_DFL)
        with contextlib.suppress(OSError, ValueError):
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
            os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status))

