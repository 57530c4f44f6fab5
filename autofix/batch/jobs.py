"""One script of a batch: its row in the view, the job a detached worker gets, and the
detached repair itself (no git: the fixes come back to be replayed). Shared by the thread
backend (:mod:`autofix.batch.local`) and the Ray backend (:mod:`autofix.batch.ray_backend`)."""

from __future__ import annotations

import dataclasses
import glob
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from autofix.errors import AutofixError
from autofix.loop.engine import Observer, repair
from autofix.settings import Settings
from autofix.types import SessionResult
from autofix.vcs.writers import MemoryBranch, PendingCommit

SUFFIXES = (".py", ".ipynb")
_SKIP_DIRS = {".git", "__pycache__", ".ipynb_checkpoints", ".venv", "node_modules"}


def collect(paths: Sequence[str]) -> list[Path]:
    """The scripts and notebooks named by ``paths`` (files, folders searched recursively,
    globs), resolved, deduplicated, sorted. Raises :class:`AutofixError` for a path that
    matches nothing."""
    found: dict[Path, None] = {}
    for raw in paths:
        matches = [Path(p) for p in glob.glob(raw, recursive=True)] or [Path(raw)]
        hit = False
        for match in matches:
            if match.is_dir():
                for root, dirs, files in os.walk(match):
                    dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS
                                     and not d.startswith("."))
                    for name in sorted(files):
                        if name.endswith(SUFFIXES):
                            found[(Path(root) / name).resolve()] = None
                            hit = True
            elif match.is_file() and match.suffix in SUFFIXES:
                found[match.resolve()] = None
                hit = True
        if not hit:
            raise AutofixError(f"{raw}: no .py or .ipynb file there")
    return sorted(found)


def branch_name(prefix: str, rel: str) -> str:
    """``prefix`` + the script's repo-relative path without suffix, made a valid ref
    (``autofix/`` + ``course/ex01.py`` -> ``autofix/course/ex01``)."""
    stem = rel.rsplit(".", 1)[0]
    parts = [re.sub(r"[^A-Za-z0-9._-]+|\.\.+", "-", p).strip(".-") or "x"
             for p in stem.split("/")]
    return prefix + "/".join(re.sub(r"\.lock$", "-lock", p) for p in parts)


@dataclass
class Row:
    """One script's line in the batch view and report."""

    path: str
    branch: str
    status: str = "waiting"
    run: int = 0
    fixes: int = 0
    note: str = ""
    seconds: float = 0.0
    result: SessionResult | None = None
    error: str = ""
    #: The boundary's exit code for a row that ended by an error (2 usage/env, 3 crash).
    code: int = 0
    nodes: list[str] = field(default_factory=list)  # Ray nodes that ran it (retries: >1)
    overhead: float = 0.0  # Ray: seconds from submission to the task starting
    started: float = 0.0  # time.monotonic() when its repair began (0: not yet)
    #: --sandbox: what isolated its runs, measured on the machine that ran them
    #: (:func:`autofix.run.sandbox.isolation`); empty without a sandbox.
    isolation: dict[str, str] = field(default_factory=dict)

    def elapsed(self) -> float:
        """Seconds so far: live while the script runs, the total once it ended."""
        if self.status == "running" and self.started:
            return time.monotonic() - self.started
        return self.seconds


#: Folders never copied into a sandbox or uploaded to a Ray cluster.
COPY_IGNORE = shutil.ignore_patterns(".git", ".venv*", "__pycache__", ".ipynb_checkpoints",
                                     "node_modules", ".mypy_cache", ".pytest_cache")


@dataclass(frozen=True)
class Job:
    """What a detached worker needs to repair one script (picklable for Ray): its index,
    its path in the repository (POSIX), its branch, the user's file as run and the
    session's settings."""

    index: int
    rel: str
    branch: str
    source: str
    settings: Settings


def repair_detached(job: Job, root: Path, observer: Observer,
                    cancel: threading.Event | None = None
                    ) -> tuple[SessionResult, list[PendingCommit]]:
    """Repair ``job``'s script found under ``root`` (a work tree: the repository on a
    shared filesystem, or Ray's unpacked copy) without touching git: returns the session
    result and the commits to replay. With a sandbox, the work tree is first copied to a
    throwaway folder (removed afterwards) and the runs happen there: the one folder of the
    host they may write (``Sandbox.workdir``; the repository is out of their sight)."""
    scratch = None
    try:
        settings = job.settings
        if settings.sandbox is not None:
            scratch = Path(tempfile.mkdtemp(prefix="autofix-sandbox-"))
            shutil.copytree(root, scratch / "tree", ignore=COPY_IGNORE, symlinks=True)
            root = scratch / "tree"
            settings = dataclasses.replace(settings, sandbox=dataclasses.replace(
                settings.sandbox, workdir=str(root)))  # the one folder the runs may write
        script = root / job.rel
        writer = MemoryBranch(job.branch, job.rel, job.source, root=str(root))
        settings = dataclasses.replace(settings, branch=job.branch, cwd=script.parent)
        result = repair(script, settings, observer=observer, cancel=cancel, writer=writer)
        return result, writer.commits
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
