"""A cgroup per run, where this machine lets autofix make one.

Every run's processes are kept in a fresh cgroup v2 folder next to autofix's own
(``<cgroup2 mount>/<autofix's cgroup>/autofix-run-<pid>-<n>``): a process can leave its
session or process group (``setsid``), never its cgroup, so writing ``1`` to the folder's
``cgroup.kill`` (Linux 5.14) ends every one of them. autofix can make one as root or
inside a delegated cgroup (a systemd user session, a container with a writable
``/sys/fs/cgroup``); elsewhere :func:`make` gives ``None`` and the supervisor's subreaper
alone collects the run's processes (``autofix/run/supervisor.py``). ``AUTOFIX_CGROUP=off``
turns cgroups off (the subreaper then does it all).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from functools import cache
from pathlib import Path

#: Environment variable: ``off`` (or ``0``/``no``) makes no cgroup for the runs.
OFF_VARIABLE = "AUTOFIX_CGROUP"
PREFIX = "autofix-run-"
_counter = itertools.count(1)


def _cgroup2_mount() -> Path | None:
    """Where the unified (v2) hierarchy is mounted, from ``/proc/self/mountinfo``."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        left, _, right = line.partition(" - ")
        if right.split(" ", 1)[0] == "cgroup2":
            return Path(left.split()[4])
    return None


@cache
def parent() -> Path | None:
    """The folder run cgroups are made in (autofix's own cgroup), or ``None`` when this
    machine has no writable cgroup v2 hierarchy for autofix."""
    mount = _cgroup2_mount()
    if mount is None:
        return None
    try:
        own = next(line[3:] for line in Path("/proc/self/cgroup").read_text().splitlines()
                   if line.startswith("0::"))
    except (OSError, StopIteration):
        return None
    folder = mount / own.lstrip("/")
    probe = folder / f"{PREFIX}{os.getpid()}-probe"
    try:
        probe.mkdir()
        probe.rmdir()
    except OSError:
        return None
    return folder


def enabled() -> bool:
    """True when runs get a cgroup here (a writable v2 hierarchy, not turned off)."""
    if os.environ.get(OFF_VARIABLE, "").lower() in ("off", "0", "no", "false"):
        return False
    return parent() is not None


def make() -> Path | None:
    """A new, empty cgroup for one run (``None`` when :func:`enabled` is not); folders
    left by a session whose autofix and supervisor both died are cleared first."""
    if not enabled():
        return None
    folder = parent()
    assert folder is not None
    clear_stale(folder)
    path = folder / f"{PREFIX}{os.getpid()}-{next(_counter)}"
    try:
        path.mkdir()
    except OSError:
        return None
    return path


def members(path: Path) -> set[int]:
    """The processes in the cgroup ``path`` (empty once it is gone)."""
    try:
        return {int(p) for p in (path / "cgroup.procs").read_text().split()}
    except OSError:
        return set()


def remove(path: Path | None, seconds: float = 5.0) -> None:
    """Kill every process left in the cgroup ``path`` and remove it (nothing when it is
    gone already: the supervisor removes it after a normal end)."""
    if path is None or not path.exists():
        return
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = members(path)
        if left:
            with contextlib.suppress(OSError):
                (path / "cgroup.kill").write_text("1")
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)


def clear_stale(folder: Path) -> None:
    """Remove the run cgroups of autofix processes that are gone, killing what is left in
    them (a session whose autofix and supervisor were both killed)."""
    with contextlib.suppress(OSError):
        for entry in folder.iterdir():
            if not entry.name.startswith(PREFIX) or not entry.is_dir():
                continue
            owner = entry.name[len(PREFIX):].split("-", 1)[0]
            if owner.isdigit() and int(owner) != os.getpid() and not _alive(int(owner)):
                remove(entry, seconds=1.0)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
