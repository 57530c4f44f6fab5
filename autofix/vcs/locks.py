"""One autofix writer per branch: an advisory lock in the repository's git folder.

A session that writes a branch (and ``autofix undo`` on it) holds
``<git common dir>/autofix/locks/<branch>.lock`` with ``flock``: a second session on the
same branch is refused at once (exit 2, naming the first one's pid), sessions on other
branches go on side by side, and the kernel drops the lock when its holder ends, however
it ends (``kill -9`` included), so a later session never meets a stale lock. Taking it is
also the first write autofix makes to ``.git``: a read-only ``.git`` is refused there,
before any run.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from autofix.errors import AutofixError


@dataclass
class BranchLock:
    """A held lock (``release`` it, or let the process end)."""

    path: Path
    fd: int

    def release(self) -> None:
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.fd)  # closing the only descriptor drops the flock
            self.fd = -1

    def __del__(self) -> None:  # a writer dropped without close() holds nothing
        self.release()


def lock_branch(git_dir: Path, branch: str) -> BranchLock:
    """Take the lock of ``branch`` in the repository whose common git folder is
    ``git_dir``. Raises :class:`AutofixError` (exit 2) when another process holds it, or
    when ``git_dir`` cannot be written (a read-only ``.git``)."""
    folder = git_dir / "autofix" / "locks"
    path = folder / (urllib.parse.quote(branch, safe="") + ".lock")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise AutofixError(
            f"cannot write to the repository's git folder {git_dir}: "
            f"{exc.strerror or exc}",
            hint="autofix commits its fixes on a branch there: make it writable, or pass "
                 "--dry-run to see the fixes without writing anything") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
        os.close(fd)
        raise AutofixError(
            f"another autofix session (pid {holder}) is writing branch {branch} in this "
            "repository",
            hint="wait for it to end, or give this session another --branch") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return BranchLock(path, fd)
