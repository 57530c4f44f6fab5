"""The user's working tree as autofix finds it, and what that means for the branch.

autofix never writes the work tree or the index; it runs the files as they are. So a
session says at its start which files are uncommitted and what it does with each
(:func:`dirty_files`), refuses to start with ``--clean-tree`` when there are any
(:func:`require_clean`), and at its end gives the commands that bring the branch in as
the tree is then (:func:`merge_advice`): a plain ``git merge BRANCH`` refuses to
overwrite an uncommitted file the branch changes, and the branch does change the script
the user edited (its first commit is the snapshot of those edits).
"""

from __future__ import annotations

import shlex
from pathlib import Path

import git

from autofix.errors import AutofixError
from autofix.types import DirtyFile, MergeAdvice
from autofix.vcs.repo import git_errors


@git_errors
def dirty_files(repo: git.Repo) -> list[DirtyFile]:
    """The files of the work tree that differ from HEAD (``git status``: modified in the
    work tree or the index, deleted, untracked; untracked folders as one entry), sorted
    by path; ignored files are left out."""
    out = repo.git.status("--porcelain=v1", "-z", "--untracked-files=normal",
                          "--ignore-submodules=all")
    found: dict[str, str] = {}
    fields = out.split("\0")
    i = 0
    while i < len(fields):
        entry = fields[i]
        i += 1
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        if code[0] in "RC":  # a rename or copy: the source path follows
            i += 1
        state = "untracked" if code == "??" else "deleted" if "D" in code else "modified"
        found[path] = state
    return [DirtyFile(p, found[p]) for p in sorted(found)]


@git_errors
def require_clean(repo: git.Repo, scripts: list[str]) -> None:
    """``--clean-tree``: raise :class:`AutofixError` (exit 2) unless every tracked file is
    as HEAD has it and each of ``scripts`` (POSIX paths in the repository) is committed.
    Untracked files other than the scripts are allowed (the runs read them; autofix never
    commits them unless a fix edits one)."""
    dirty = [d for d in dirty_files(repo) if d.state != "untracked"
             or any(s == d.path or s.startswith(d.path.rstrip("/") + "/") for s in scripts)]
    if not dirty:
        return
    names = ", ".join(f"{d.path} ({d.state})" for d in dirty[:6])
    more = f" and {len(dirty) - 6} more" if len(dirty) > 6 else ""
    files = " ".join(shlex.quote(d.path) for d in dirty[:6])
    raise AutofixError(
        f"--clean-tree: uncommitted changes: {names}{more}",
        hint=f"commit them (git add {files} && git commit) or stash them (git stash push "
             f"--include-untracked), then run autofix again; without --clean-tree autofix "
             f"runs the files as they are and snapshots an edited script on the branch")


@git_errors
def merge_advice(repo: git.Repo, branch: str) -> MergeAdvice:
    """The commands that bring ``branch`` into the checkout as the work tree is now:
    ``git merge BRANCH`` when no uncommitted file is one the branch changes; else the
    merge with those files stashed around it (the branch already holds them as they were
    run), and the checkout of the branch's files; files edited again after autofix ran
    them are named (commit them first: only a real merge keeps both edits)."""
    g = repo.git
    quoted = shlex.quote(branch)
    base = g.merge_base("HEAD", branch).strip()
    changed = set(g.diff("--name-only", "-z", base, branch).split("\0")) - {""}
    dirty = {d.path: d.state for d in dirty_files(repo)}
    blocking = sorted(p for p in changed if p in dirty
                      or any(p.startswith(d.rstrip("/") + "/") for d in dirty if d.endswith("/")))
    if not blocking:
        return MergeAdvice(f"git merge {quoted}")
    root = Path(str(repo.working_tree_dir))
    edited = tuple(p for p in blocking if not _as_snapshotted(repo, base, branch, root, p))
    files = " ".join(shlex.quote(p) for p in blocking)
    untracked = " --include-untracked" if any(dirty.get(p) == "untracked" or p not in dirty
                                              for p in blocking) else ""
    return MergeAdvice(
        merge=f"git stash push{untracked} -- {files} && git merge {quoted} && git stash drop",
        take=f"git checkout {quoted} -- {files}", blocking=tuple(blocking),
        edited_since=edited)


def _as_snapshotted(repo: git.Repo, base: str, branch: str, root: Path, rel: str) -> bool:
    """True when the work tree's ``rel`` is what the branch started from: the file of
    the branch's first commit after ``base`` that touched it (its snapshot, or the file
    at ``base`` when the first such commit is a fix), so stashing it loses nothing."""
    shas = repo.git.rev_list("--reverse", f"{base}..{branch}", "--", rel).split()
    if not shas:
        return False
    first = repo.commit(shas[0])
    subject = str(first.summary)
    source = first if subject.startswith("autofix: snapshot ") else first.parents[0]
    try:
        wanted = (source.tree / rel).data_stream.read()
    except KeyError:
        return False
    path = root / rel
    return path.is_file() and path.read_bytes() == wanted
