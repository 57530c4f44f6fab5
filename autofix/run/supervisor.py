"""The run supervisor: every process a run starts ends with the run, and with autofix.

Executed by path with autofix's own interpreter (standard library only, like the child's
bootstrap): ``python -I supervisor.py WATCH_FD CGROUP GRACE -- CMD...``. It

- makes itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``, Linux 3.4): a
  process the script starts in its own session (``setsid``, ``start_new_session=True``)
  or that double-forks is reparented to the supervisor, not to PID 1, so it can be found
  and killed;
- starts ``CMD`` in its own process group, and inside the cgroup ``CGROUP`` when one is
  given (a folder of a cgroup v2 hierarchy that autofix made for this run; ``""``: none):
  a process can leave a session or a process group, never its cgroup;
- watches ``WATCH_FD``, the read end of a pipe whose write end only autofix holds: when
  autofix dies, even by ``kill -9``, the pipe reads end-of-file and the supervisor kills
  every process of the run at once;
- on ``SIGTERM`` (a timeout, Ctrl-C, a cancelled run) sends ``SIGTERM`` to every process
  of the run, waits up to ``GRACE`` seconds for the command, then kills what is left;
  ``SIGUSR1`` kills at once;
- when the command ends, kills whatever it left behind (``cgroup.kill``, then
  ``SIGKILL`` to every descendant), reaps them, removes the cgroup and exits as the
  command did: its exit code, or the same signal.

Nothing here is specific to a training run: the API check's process runs under it too.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import os
import select
import signal
import sys
import time
import types
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
#: Seconds the final sweep keeps killing and reaping before it gives up on a process.
SWEEP_SECONDS = 10.0
PROCS_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "child", "procs.py")


def _load_procs() -> types.ModuleType:
    """``child/procs.py`` (what a run's processes are, and how to exit like one), loaded
    by path as ``_autofix_procs``: this file is executed by path too."""
    if "_autofix_procs" in sys.modules:
        return sys.modules["_autofix_procs"]
    spec = importlib.util.spec_from_file_location("_autofix_procs", PROCS_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


PROCS = _load_procs()


class _State:
    def __init__(self) -> None:
        self.stop = False  # SIGTERM: stop gracefully
        self.kill = False  # SIGUSR1: kill now
        self.status: int | None = None  # the command's wait status, once reaped
        self.child = 0


STATE = _State()


def make_subreaper() -> bool:
    """Become the child subreaper of every descendant; False where Linux's prctl is not."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def descendants() -> set[int]:
    """Every living descendant of this process (children, theirs, ...)."""
    result: set[int] = PROCS.descendants()
    return result


def cgroup_pids(cgroup: str) -> set[int]:
    """The processes in ``cgroup`` (empty when there is none)."""
    if not cgroup:
        return set()
    try:
        text = Path(cgroup, "cgroup.procs").read_text()
    except OSError:
        return set()
    return {int(p) for p in text.split()}


def signal_all(sig: int, cgroup: str) -> set[int]:
    """Send ``sig`` to every process of the run; returns those it was sent to."""
    pids = descendants() | cgroup_pids(cgroup)
    if sig == signal.SIGKILL and cgroup:
        with contextlib.suppress(OSError):
            Path(cgroup, "cgroup.kill").write_text("1")  # Linux 5.14: the whole cgroup
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, sig)
    return pids


def reap() -> None:
    """Collect every child that has ended (orphans reparented here included)."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid == STATE.child:
            STATE.status = status


def sweep(cgroup: str) -> None:
    """Kill and reap every process of the run until none is left (or ``SWEEP_SECONDS``)."""
    deadline = time.monotonic() + SWEEP_SECONDS
    while True:
        left = signal_all(signal.SIGKILL, cgroup)
        reap()
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    if cgroup:
        for _ in range(50):  # the kernel drops the last members shortly after they die
            try:
                os.rmdir(cgroup)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.02)


def start(cmd: list[str], cgroup: str) -> int:
    """Fork and exec ``cmd`` in its own process group, inside ``cgroup`` when given."""
    pid = os.fork()
    if pid:
        return pid
    try:  # the child: nothing here may raise past exec
        for sig in (signal.SIGTERM, signal.SIGUSR1, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        os.setpgid(0, 0)
        if cgroup:
            with contextlib.suppress(OSError):
                Path(cgroup, "cgroup.procs").write_text("0")
        os.execvp(cmd[0], cmd)
    except BaseException as exc:  # noqa: BLE001 - report and end the forked child
        with contextlib.suppress(BaseException):
            os.write(2, f"autofix: cannot start {cmd[0]}: {exc}\n".encode())
    os._exit(127)


def exit_like(status: int | None) -> None:
    """End this process as the command ended: the same exit code, or the same signal."""
    PROCS.exit_like(status)


def main(argv: list[str]) -> None:
    watch, cgroup, grace = int(argv[1]), argv[2], float(argv[3])
    cmd = argv[5:] if argv[4] == "--" else argv[4:]
    if watch >= 0:
        os.set_inheritable(watch, False)
    make_subreaper()
    signal.signal(signal.SIGTERM, lambda *_: setattr(STATE, "stop", True))
    signal.signal(signal.SIGUSR1, lambda *_: setattr(STATE, "kill", True))
    # Ctrl-C reaches autofix, which stops the run by SIGTERM; a handler (never SIG_IGN,
    # which the command would inherit) keeps a stray SIGINT from ending the supervisor.
    signal.signal(signal.SIGINT, lambda *_: None)
    STATE.child = start(cmd, cgroup)
    stop_by = 0.0
    orphaned = False
    while STATE.status is None:
        reap()
        if STATE.status is not None:
            break
        if STATE.stop and not stop_by:
            signal_all(signal.SIGTERM, cgroup)
            stop_by = time.monotonic() + grace
        if STATE.kill or orphaned or (stop_by and time.monotonic() > stop_by):
            break
        if watch < 0:
            time.sleep(0.05)
            continue
        try:
            ready, _, _ = select.select([watch], [], [], 0.05)
        except InterruptedError:
            continue
        if ready:
            try:
                orphaned = os.read(watch, 64) == b""  # autofix is gone
            except OSError:
                orphaned = True
    sweep(cgroup)
    exit_like(STATE.status)


if __name__ == "__main__":
    try:
        main(sys.argv)
    except KeyboardInterrupt:  # pragma: no cover - the runner stops runs by SIGTERM
        os._exit(130)
