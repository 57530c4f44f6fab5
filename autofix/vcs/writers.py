"""Where the repair loop writes its fixes: a git branch, or memory to be replayed.

The engine only needs a :class:`BranchWriter`: the branch name, the script's path in the
repository, the source the next run executes, ``commit_fix`` and ``drop_last``.
:class:`autofix.vcs.repo.FixBranch` writes git objects and refs directly (one machine, one
repository). :class:`MemoryBranch` keeps the commits in memory: a Ray task or a sandboxed
session uses it and returns them, and the driver replays them with
:func:`replay` (:mod:`autofix.vcs` only), so no two machines or processes write one repository.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from autofix.types import SessionResult
from autofix.vcs.repo import open_repo, prepare_branch

#: Prefix of the placeholder shas a :class:`MemoryBranch` hands out until replayed.
PENDING = "pending-"


class BranchWriter(Protocol):
    """What the engine's loop writes fixes through: the branch name, the script's path in
    the repository (``rel``, POSIX), the source the next run executes, and the folder
    evidence paths are made relative to (``root``: the repository's work tree)."""

    branch: str
    rel: str
    source: str

    @property
    def root(self) -> str: ...

    @property
    def files(self) -> dict[str, str]:
        """The user's modules a fix edited: POSIX path in the repository -> their text on
        the branch (the script is ``rel``/``source``)."""
        ...

    def read(self, rel: str) -> str:
        """The branch's version of the file ``rel``: the script's ``source``, an edited
        module's text, else the file as the user has it."""
        ...

    def commit_fix(self, content: str, message: str, rel: str | None = None) -> str:
        """Record ``content`` as the next version of ``rel`` (default: the script); returns
        the commit's id."""
        ...

    def drop_last(self) -> None:
        """Forget the last commit (a fix that did not help); ``source`` goes back."""
        ...

    def autofix_commits(self) -> list[str]:
        """The autofix commits already on the branch (``--resume``), oldest first."""
        ...

    def diff_stat(self) -> tuple[str, str]:
        """The base commit and ``git diff --stat`` of the branch against it (``("", "")``
        where nothing was written to git)."""
        ...

    def close(self) -> None:
        """Release what the writer holds (a dry run's temporary object folder)."""
        ...


@dataclass(frozen=True)
class PendingCommit:
    """A fix made in memory: the patched file (``rel``: the script or one of the user's
    modules), its commit message, and what the file held before it."""

    key: str
    content: str
    message: str
    parent_source: str
    rel: str = ""


@dataclass
class MemoryBranch:
    """A :class:`BranchWriter` that writes nothing: ``commits`` are replayed later.

    ``source`` starts as the user's file as run (bytes decoded as UTF-8, line endings
    kept); commit ids are placeholders ``pending-N`` until :func:`replay` maps them.
    """

    branch: str
    rel: str
    source: str
    root: str = ""
    commits: list[PendingCommit] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    _made: int = 0

    def read(self, rel: str) -> str:
        if rel == self.rel:
            return self.source
        if rel in self.files:
            return self.files[rel]
        return (Path(self.root) / rel).read_bytes().decode("utf-8")

    def commit_fix(self, content: str, message: str, rel: str | None = None) -> str:
        rel = rel or self.rel
        self._made += 1
        key = f"{PENDING}{self._made}"
        self.commits.append(PendingCommit(key, content, message, self.read(rel), rel))
        if rel == self.rel:
            self.source = content
        else:
            self.files[rel] = content
        return key

    def drop_last(self) -> None:
        dropped = self.commits.pop()
        if dropped.rel in ("", self.rel):
            self.source = dropped.parent_source
        else:
            self.files[dropped.rel] = dropped.parent_source

    def autofix_commits(self) -> list[str]:
        return []  # a detached session starts from the user's file, never a --resume

    def diff_stat(self) -> tuple[str, str]:
        return "", ""  # the driver's replay writes the branch and its diff

    def close(self) -> None:
        pass


def replay(script: Path, branch: str, base: str, commits: list[PendingCommit],
           result: SessionResult) -> SessionResult:
    """Write ``commits`` on ``branch`` (made from ``base``) in the repository holding
    ``script`` (the user's file, on the driver's machine), and return ``result`` with
    the placeholder ids replaced by the real shas.

    The branch gets the same commits a direct session would have left (a snapshot commit
    first when the user's file differs from ``base``); a dry run's (``result.dry_run``)
    are shown, never written. Raises :class:`AutofixError` when the branch exists already
    or moved while being written.
    """
    if not commits or result.dry_run:
        return result
    fixes = prepare_branch(open_repo(script), script, branch, False, base=base)
    real = {c.key: fixes.commit_fix(c.content, c.message, c.rel or None) for c in commits}
    result.fixes = [dataclasses.replace(f, commit=real.get(f.commit, f.commit))
                    for f in result.fixes]
    result.runs = [dataclasses.replace(r, commit=real.get(r.commit, r.commit),
                                       commits=[real.get(c, c) for c in r.commits])
                   for r in result.runs]
    return result
