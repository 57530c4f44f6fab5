"""Git side of autofix (GitPython): commits fixes on a branch, never the user's checkout.

Commits are built with plumbing against a private index file (``GIT_INDEX_FILE``), so the
user's working tree, index and current branch are never written. The branch ref moves with
``update-ref NEW OLD`` (compare-and-swap), so a concurrent writer is detected, not
overwritten, and the branch is consistent after every step, Ctrl-C included.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from typing import ParamSpec, TypeVar

import git
from gitdb import IStream

from autofix.errors import AutofixError, GitError
from autofix.vcs.locks import BranchLock, lock_branch
from autofix.vcs.trailers import parse_trailers

P = ParamSpec("P")
R = TypeVar("R")


def git_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn GitPython's ``GitCommandError`` into :class:`GitError` (exit 2 with git's
    message): nothing outside :mod:`autofix.vcs` sees GitPython's exception types."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except git.GitCommandError as exc:
            detail = (exc.stderr or str(exc)).strip().removeprefix("stderr:").strip(" '\n")
            raise GitError(f"git failed: {' '.join(map(str, exc.command))[:200]}: {detail}",
                           hint="check the repository (git status, git fsck)") from exc

    return wrapper

_ZERO = "0" * 40
#: Identity used when the repository has none configured (git refuses to commit without).
_FALLBACK_IDENTITY = {"name": "autofix", "email": "autofix@localhost"}


@git_errors
def open_repo(script: Path, init: bool = False) -> git.Repo:
    """The repository holding ``script``; with ``init``, create one with the script as its
    first commit when there is none.

    Raises :class:`AutofixError` when ``script`` is not in a git work tree (without
    ``init``) or the repository has no commit yet.
    """
    try:
        repo = _discover(script.parent)
    except git.InvalidGitRepositoryError:
        if not init:
            raise AutofixError(
                f"{script.parent} is not inside a git repository",
                hint="autofix commits its fixes on a branch: run `git init` and commit the "
                     "script, or pass --init to let autofix do it",
            ) from None
        repo = git.Repo.init(script.parent)
        rel = script.relative_to(script.parent).as_posix()
        repo.index.add([rel])
        with repo.config_writer() as cw:
            if not _has_identity(repo):
                cw.set_value("user", "name", _FALLBACK_IDENTITY["name"])
                cw.set_value("user", "email", _FALLBACK_IDENTITY["email"])
        repo.index.commit(f"Add {rel} (autofix --init)")
        return repo
    if repo.bare:
        raise AutofixError(f"{repo.git_dir} is a bare repository; autofix needs a work tree")
    if not repo.head.is_valid():
        raise AutofixError(
            f"the repository at {repo.working_tree_dir} has no commit yet",
            hint="commit the script first (git add SCRIPT && git commit), then run autofix",
        )
    return repo


def _has_identity(repo: git.Repo) -> bool:
    reader = repo.config_reader()
    return bool(reader.get_value("user", "name", "")) and bool(
        reader.get_value("user", "email", ""))


@git_errors
def validate_branch_name(repo: git.Repo, branch: str) -> None:
    """Raise :class:`AutofixError` unless ``branch`` can name autofix's branch: a valid
    name that is not ``@``/``HEAD``, no tag's name, and no file/folder clash with an
    existing branch (``autofix`` next to ``autofix/train``)."""
    hint = "choose another --branch"
    try:
        repo.git.check_ref_format("--branch", branch)
    except git.GitCommandError:
        raise AutofixError(f"{branch!r} is not a valid branch name", hint=hint) from None
    if branch in ("@", "HEAD") or branch in repo.tags:
        raise AutofixError(f"{branch!r} would be ambiguous with HEAD or a tag", hint=hint)
    for head in repo.heads:
        if branch.startswith(head.name + "/") or head.name.startswith(branch + "/"):
            raise AutofixError(f"branch {branch!r} clashes with the existing branch "
                               f"{head.name!r} (git cannot hold both)", hint=hint)


@git_errors
def checked_out_branches(repo: git.Repo) -> set[str]:
    """Branches checked out in any worktree of ``repo`` (the main one and linked ones)."""
    out = repo.git.worktree("list", "--porcelain")
    return {line.split(" ", 1)[1].removeprefix("refs/heads/")
            for line in out.splitlines() if line.startswith("branch ")}


@dataclass
class FixBranch:
    """The branch autofix writes: created lazily at the first fix, from ``base``.

    ``rel`` is the script's path inside the repository (POSIX). ``source`` is what the
    next run executes. When the user's file differs from ``base`` (uncommitted changes or
    an untracked script), the first commit snapshots the file as the user ran it.
    """

    repo: git.Repo
    branch: str
    rel: str
    base: str
    source: str
    tip: str
    exists: bool
    snapshot_pending: bool
    commits: list[str] = field(default_factory=list)
    resumed: bool = False
    #: The user's modules a fix edited (POSIX path in the repository -> the branch's text).
    files: dict[str, str] = field(default_factory=dict)
    #: Dry run: new objects go to this temporary folder (the repository's own objects are
    #: read as alternates) and no ref is written; :meth:`close` removes it.
    scratch: str = ""
    #: The branch's lock (one writer per branch), released by :meth:`close`.
    lock: BranchLock | None = None

    @property
    def ref(self) -> str:
        return f"refs/heads/{self.branch}"

    @property
    def root(self) -> str:
        """The repository's work tree (evidence paths are made relative to it)."""
        return str(self.repo.working_tree_dir)

    def _objects(self) -> dict[str, str]:
        """Environment sending new git objects to the scratch folder (dry run), else {}."""
        if not self.scratch:
            return {}
        return {"GIT_OBJECT_DIRECTORY": self.scratch,
                "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(Path(self.repo.git_dir) / "objects")}

    def close(self) -> None:
        """Remove the dry run's temporary objects and release the branch's lock."""
        if self.scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = ""
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    def autofix_commits(self) -> list[str]:
        """The autofix commits on the branch that are not in HEAD, newest first."""
        if not self.exists:
            return []
        return [c.sha for c in branch_log(self.repo, self.branch)]

    def diff_stat(self) -> tuple[str, str]:
        """``(base, stat)``: the commit the branch forked from HEAD and ``git diff --stat``
        from it to the branch's tip ("" when the branch holds no change)."""
        if not self.exists:
            return "", ""
        env = self._objects()
        g = self.repo.git
        try:
            base: str = g.merge_base("HEAD", self.tip, env=env).strip()
            return base, str(g.diff("--stat", base, self.tip, env=env))
        except git.GitCommandError:  # e.g. no common history: the summary goes without
            return "", ""

    def _env(self, index: str) -> dict[str, str]:
        env = {"GIT_INDEX_FILE": index, **self._objects()}
        if not _has_identity(self.repo):
            for role in ("AUTHOR", "COMMITTER"):
                env[f"GIT_{role}_NAME"] = _FALLBACK_IDENTITY["name"]
                env[f"GIT_{role}_EMAIL"] = _FALLBACK_IDENTITY["email"]
        return env

    def _mode(self, rel: str) -> str:
        try:
            blob = self.repo.commit(self.base).tree / rel
            return f"{blob.mode:o}"
        except KeyError:
            return "100644"

    def _commit(self, changes: dict[str, str], message: str) -> str:
        """One commit on the branch's tip with each ``rel -> content`` of ``changes``."""
        with tempfile.TemporaryDirectory(prefix="autofix-index-") as tmp:
            env = self._env(os.path.join(tmp, "index"))
            g = self.repo.git
            g.read_tree(self.tip, env=env)
            for n, (rel, content) in enumerate(changes.items()):
                data = content.encode("utf-8")
                if self.scratch:
                    loose = Path(tmp) / f"blob{n}"
                    loose.write_bytes(data)
                    blob = g.hash_object("-w", "--no-filters", str(loose), env=env).strip()
                else:
                    blob = self.repo.odb.store(
                        IStream(git.Blob.type, len(data), BytesIO(data))).hexsha.decode()
                g.update_index("--add", "--cacheinfo", f"{self._mode(rel)},{blob},{rel}",
                               env=env)
            tree = g.write_tree(env=env)
            sha: str = g.commit_tree(tree, "-p", self.tip, "-m", message, env=env).strip()
        old = self.tip if self.exists else _ZERO
        if self.scratch:  # dry run: the tip lives in memory only
            self.exists, self.tip = True, sha
            self.commits.append(sha)
            return sha
        try:
            self.repo.git.update_ref("-m", "autofix: " + message.splitlines()[0], self.ref,
                                     sha, old)
        except git.GitCommandError as exc:
            raise AutofixError(f"branch {self.branch} moved while autofix was writing it",
                               hint="another process wrote the branch; rerun with --resume") \
                from exc
        self.exists = True
        self.tip = sha
        self.commits.append(sha)
        return sha

    def read(self, rel: str) -> str:
        """The branch's version of the file ``rel`` (POSIX, in the repository): the script's
        ``source``, an edited module's content, else the file as the user has it."""
        if rel == self.rel:
            return self.source
        if rel in self.files:
            return self.files[rel]
        return (Path(self.root) / rel).read_bytes().decode("utf-8")

    def _differs_from_base(self, rel: str, content: str) -> bool:
        try:
            blob = self.repo.commit(self.base).tree / rel
        except KeyError:
            return True
        return bool(blob.data_stream.read().decode("utf-8") != content)

    @git_errors
    def commit_fix(self, content: str, message: str, rel: str | None = None) -> str:
        """Commit ``content`` as the file ``rel`` (default: the script) on the branch;
        returns the fix commit's sha.

        Writes a snapshot commit first when the file as the user ran it differs from the
        base (uncommitted changes). Raises :class:`AutofixError` when the branch moved
        under autofix.
        """
        rel = rel or self.rel
        if rel == self.rel and self.snapshot_pending:
            self._commit({self.rel: self.source}, _snapshot_message(self.rel, "script"))
            self.snapshot_pending = False
        elif rel != self.rel and rel not in self.files:
            user = self.read(rel)
            if self._differs_from_base(rel, user):
                self._commit({rel: user}, _snapshot_message(rel))
        sha = self._commit({rel: content}, message)
        if rel == self.rel:
            self.source = content
        else:
            self.files[rel] = content
        return sha

    @git_errors
    def drop_last(self) -> None:
        """Move the branch back past its last fix commit; a branch this session created
        and that is left with no fix is deleted. The dropped commit stays in the reflog."""
        dropped = self.commits.pop()
        parent = self.repo.git.rev_parse(f"{dropped}^", env=self._objects()).strip()
        self.source = self._read(parent, self.rel)
        for rel in list(self.files):
            try:
                self.files[rel] = self._read(parent, rel)
            except (KeyError, git.GitCommandError):
                del self.files[rel]  # not on the branch before: the user's file again
        fixes_left = [c for c in self.commits if not self._is_snapshot(c)]
        if not fixes_left and not self.resumed:
            if not self.scratch:
                self.repo.git.update_ref("-d", self.ref, dropped)
            self.exists = False
            self.snapshot_pending = self._differs_from_base(self.rel, self.source)
            self.commits.clear()
            self.files.clear()
            self.tip = self.base
            return
        if not self.scratch:
            self.repo.git.update_ref("-m", "autofix: drop a fix that did not help", self.ref,
                                     parent, dropped)
        self.tip = parent

    def _is_snapshot(self, sha: str) -> bool:
        subject = self.repo.git.log("-1", "--format=%s", sha, env=self._objects())
        return str(subject).startswith("autofix: snapshot ")

    def _read(self, sha: str, rel: str) -> str:
        if self.scratch:
            data = self.repo.git.cat_file("blob", f"{sha}:{rel}", env=self._objects(),
                                          strip_newline_in_stdout=False)
            return str(data)
        blob = self.repo.commit(sha).tree / rel
        return str(blob.data_stream.read().decode("utf-8"))


def _snapshot_message(rel: str, what: str = "file") -> str:
    return (f"autofix: snapshot {rel} as run (uncommitted changes)\n\nThe {what} differs from "
            "HEAD; this is the version autofix ran and fixed.")


@git_errors
def prepare_branch(repo: git.Repo, script: Path, branch: str, resume: bool,
                   base: str | None = None, dry_run: bool = False) -> FixBranch:
    """Set up the :class:`FixBranch` for ``script`` (an absolute path in ``repo``), from
    commit ``base`` (default: HEAD). With ``dry_run`` the branch writes its objects to a
    temporary folder and no ref (call :meth:`FixBranch.close` to remove the folder).

    Raises :class:`AutofixError` when the branch exists without ``resume``, when
    ``resume`` names a branch that does not exist, when it is the checked-out branch, when
    another session writes it (:mod:`autofix.vcs.locks`) or ``.git`` cannot be written.
    """
    validate_branch_name(repo, branch)
    workdir = Path(str(repo.working_tree_dir)).resolve()
    try:
        rel = script.resolve().relative_to(workdir).as_posix()
    except ValueError:
        raise AutofixError(f"{script} resolves outside the work tree {workdir}",
                           hint="run autofix on the file inside the repository") from None
    if branch in checked_out_branches(repo):
        raise AutofixError(f"--branch {branch} is checked out in a worktree",
                           hint="autofix never writes a checked-out branch; pick another name "
                                "or check the branch out nowhere")
    lock = None if dry_run else lock_branch(common_dir(repo), branch)
    try:
        made = _prepare(repo, script, branch, rel, resume, base, dry_run)
    except BaseException:
        if lock is not None:
            lock.release()
        raise
    made.lock = lock
    return made


def common_dir(repo: git.Repo) -> Path:
    """The git folder every worktree of ``repo`` shares (refs, objects, autofix's locks)."""
    return Path(str(repo.common_dir)).resolve()


def _prepare(repo: git.Repo, script: Path, branch: str, rel: str, resume: bool,
             base: str | None, dry_run: bool) -> FixBranch:
    exists = branch in repo.heads
    user_source = script.read_bytes().decode("utf-8")  # CRLF kept, as git stores it
    if exists and not resume:
        raise AutofixError(f"branch {branch} already exists",
                           hint="pass --resume to continue it, or choose another --branch")
    if resume:
        if not exists:
            raise AutofixError(f"--resume: branch {branch} does not exist")
        tip = repo.heads[branch].commit.hexsha
        try:
            source = str((repo.commit(tip).tree / rel).data_stream.read().decode("utf-8"))
        except KeyError:
            raise AutofixError(f"branch {branch} has no {rel}") from None
        return FixBranch(repo, branch, rel, tip, source, tip, True, False, resumed=True,
                         scratch=_scratch(dry_run))
    base = base or repo.head.commit.hexsha
    try:
        head_source: str | None = (repo.commit(base).tree / rel).data_stream.read().decode(
            "utf-8")
    except KeyError:
        head_source = None
    return FixBranch(repo, branch, rel, base, user_source, base, False,
                     snapshot_pending=head_source != user_source, scratch=_scratch(dry_run))


def _discover(folder: Path) -> git.Repo:
    """The repository ``folder`` is in, found as git itself finds it (``git rev-parse
    --show-toplevel``: ``GIT_CEILING_DIRECTORIES`` and ``GIT_DIR`` are honoured, which
    GitPython's own parent search ignores). Raises ``git.InvalidGitRepositoryError`` when
    there is none, ``git.NoSuchPathError`` when ``folder`` does not exist."""
    if not folder.is_dir():
        raise git.NoSuchPathError(str(folder))
    try:
        top = git.Git(str(folder)).rev_parse("--show-toplevel")
    except git.GitCommandError:
        raise git.InvalidGitRepositoryError(str(folder)) from None
    return git.Repo(top)


#: The repository type, for callers that only pass one along (only this module imports git).
Repo = git.Repo


def repo_containing(folder: Path) -> git.Repo:
    """The git repository ``folder`` is inside. Raises :class:`AutofixError` when there is
    none."""
    try:
        return _discover(folder)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise AutofixError(f"{folder} is not inside a git repository") from None


@git_errors
def repo_root(repo: git.Repo) -> Path:
    """The resolved work-tree root of ``repo``."""
    return Path(str(repo.working_tree_dir)).resolve()


@git_errors
def head_sha(repo: git.Repo) -> str:
    """The commit HEAD points at (hex sha)."""
    return str(repo.head.commit.hexsha)


@git_errors
def branch_names(repo: git.Repo) -> set[str]:
    """The names of the local branches of ``repo``."""
    return {h.name for h in repo.heads}


def _scratch(dry_run: bool) -> str:
    return tempfile.mkdtemp(prefix="autofix-dry-run-") if dry_run else ""


# -- autofix's branches after a session: log, undo, list, prune ---------------------------


@dataclass(frozen=True)
class AutofixCommit:
    """One commit autofix made, read back from its message and trailers."""

    sha: str
    subject: str
    category: str  # ``Autofix-Category`` ("" for a snapshot commit)
    recipe: str  # ``Autofix-Recipe``
    via: str
    date: str  # ISO 8601 commit date

    @property
    def snapshot(self) -> bool:
        return not self.recipe


def _autofix_commit(commit: git.Commit) -> AutofixCommit | None:
    trailers = parse_trailers(str(commit.message))
    subject = str(commit.summary)
    if not trailers.recipe and not subject.startswith("autofix: snapshot "):
        return None
    return AutofixCommit(commit.hexsha, subject, trailers.category, trailers.recipe,
                         trailers.via, commit.committed_datetime.isoformat())


def _head(repo: git.Repo, branch: str) -> git.Head:
    if branch not in repo.heads:
        raise AutofixError(f"no branch {branch!r}", hint="`autofix branches` lists autofix's")
    return repo.heads[branch]


def branch_log(repo: git.Repo, branch: str) -> list[AutofixCommit]:
    """The autofix commits at the tip of ``branch``, newest first: the first-parent chain
    from the tip down to the first commit autofix did not make. Raises
    :class:`AutofixError` when the branch does not exist."""
    found = []
    commit: git.Commit | None = _head(repo, branch).commit
    while commit is not None:
        made = _autofix_commit(commit)
        if made is None:
            break
        found.append(made)
        commit = commit.parents[0] if commit.parents else None
    return found


def undo_last(repo: git.Repo, branch: str) -> AutofixCommit:
    """Move ``branch`` back past its tip commit, which must be an autofix fix commit (a
    snapshot commit below it is dropped too when no fix is left above it). Returns the
    dropped fix. Raises :class:`AutofixError` when autofix did not make the branch, it is
    checked out anywhere, a session is writing it, its tip is not autofix's, or it moved
    meanwhile."""
    head = _head(repo, branch)
    if not made_by_autofix(head):
        raise AutofixError(f"{branch} is not an autofix branch",
                           hint="autofix undo only rewrites the branches autofix made "
                                "(`autofix branches` lists them)")
    if branch in checked_out_branches(repo):
        raise AutofixError(f"branch {branch} is checked out",
                           hint="autofix never rewrites a checked-out branch; switch away "
                                "first or use `git reset` yourself")
    lock = lock_branch(common_dir(repo), branch)
    try:
        return _undo(repo, branch, head)
    finally:
        lock.release()


def _undo(repo: git.Repo, branch: str, head: git.Head) -> AutofixCommit:
    tip = head.commit
    made = _autofix_commit(tip)
    if made is None or made.snapshot:
        raise AutofixError(f"the tip of {branch} ({tip.hexsha[:8]} {tip.summary!s}) is not an "
                           "autofix fix commit", hint="autofix only undoes its own commits")
    if not tip.parents:
        raise AutofixError(f"{tip.hexsha[:8]} has no parent to go back to")
    target = tip.parents[0]
    below = _autofix_commit(target)
    if below is not None and below.snapshot and target.parents:
        target = target.parents[0]  # no fix is left on top of the snapshot
    try:
        repo.git.update_ref("-m", f"autofix undo: drop {tip.hexsha[:8]}", head.path,
                            target.hexsha, tip.hexsha)
    except git.GitCommandError as exc:
        raise AutofixError(f"branch {branch} moved while autofix was writing it") from exc
    return made


@dataclass(frozen=True)
class BranchInfo:
    """An autofix branch: its name, autofix commits at the tip, merged into HEAD or not."""

    name: str
    commits: int
    merged: bool
    checked_out: bool
    subject: str


def made_by_autofix(head: git.Head) -> bool:
    """True when autofix created the branch: the first entry of its reflog is autofix's
    (``update-ref -m "autofix: ..."``); without a reflog, a name under ``autofix/``."""
    try:
        entries = list(head.log())
    except (OSError, ValueError):
        entries = []
    if entries:
        return str(entries[0].message).startswith("autofix")
    return head.name.startswith("autofix/")


def autofix_branches(repo: git.Repo) -> list[BranchInfo]:
    """The branches autofix created (:func:`made_by_autofix`) whose tip is still an
    autofix commit, sorted by name; a branch you merged into stays out."""
    out = []
    busy = checked_out_branches(repo)
    head = repo.head.commit.hexsha
    for ref in sorted(repo.heads, key=lambda h: h.name):
        log = branch_log(repo, ref.name) if made_by_autofix(ref) else []
        if not log:
            continue
        merged = repo.is_ancestor(ref.commit, repo.commit(head))
        out.append(BranchInfo(ref.name, len(log), merged, ref.name in busy, log[0].subject))
    return out


def delete_branch(repo: git.Repo, info: BranchInfo) -> None:
    """Delete the merged, not checked-out autofix branch ``info`` (its commits are in HEAD;
    the ref only is removed, compare-and-swap on its tip)."""
    if not info.merged or info.checked_out:
        raise AutofixError(f"branch {info.name} is not merged or is checked out")
    sha = repo.heads[info.name].commit.hexsha
    repo.git.update_ref("-d", f"refs/heads/{info.name}", sha)
