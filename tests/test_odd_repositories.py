"""Odd repositories (issue 27, point 6): a detached HEAD, a shallow clone, a script inside a
submodule, a sparse checkout and LFS pointer files. In each, the fix branch gets its commit
and nothing the user has changes: HEAD (detached or not), the index, every work-tree file,
the outer repository of a submodule; ``git fsck --strict`` stays clean and the files the
branch does not touch (out-of-cone files, LFS pointers, the submodule link) are the same
objects on the branch as in HEAD (:mod:`autofix.vcs.repo`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import git

from autofix.vcs.repo import open_repo, prepare_branch

from .conftest import make_repo

SCRIPT = "from transformers import AdamW\nprint('train')\n"
FIXED = "from torch.optim import AdamW\nprint('train')\n"
POINTER = ("version https://git-lfs.github.com/spec/v1\n"
           "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
           "size 12345\n")


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def _state(root: Path) -> dict[str, object]:
    """HEAD as git names it (a branch or a detached sha), the index, every work-tree file."""
    dot_git = Path(_git(root, "rev-parse", "--absolute-git-dir").strip())
    files = {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
             if p.is_file() and ".git" not in p.relative_to(root).parts}
    return {"head": (dot_git / "HEAD").read_text(), "sha": _git(root, "rev-parse", "HEAD"),
            "index": (dot_git / "index").read_bytes(), "files": files}


def _fix(script: Path) -> git.Repo:
    """One autofix commit of :data:`FIXED` on branch ``autofix/t`` for ``script``, as the
    engine writes it; asserts the user's state is unchanged and the repository sound."""
    repo = open_repo(script)
    root = Path(str(repo.working_tree_dir))
    before = _state(root)
    branch = prepare_branch(repo, script, "autofix/t", resume=False)
    try:
        branch.commit_fix(FIXED, "autofix: drift-adamw\n\nthe import moved to torch.optim")
    finally:
        branch.close()
    assert _state(root) == before
    _git(root, "fsck", "--strict")
    rel = script.resolve().relative_to(root.resolve()).as_posix()
    assert _git(root, "show", f"autofix/t:{rel}") == FIXED
    assert _git(root, "rev-parse", "autofix/t^") == before["sha"]
    return repo


def _same_blob(root: Path, path: str) -> None:
    assert _git(root, "rev-parse", f"HEAD:{path}") == _git(root, "rev-parse", f"autofix/t:{path}")


def test_detached_head(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"train.py": SCRIPT, "other.txt": "x\n"})
    root = Path(str(repo.working_tree_dir))
    _git(root, "checkout", "-q", "--detach")
    _fix(root / "train.py")
    assert _git(root, "rev-parse", "--abbrev-ref", "HEAD").strip() == "HEAD"  # still detached


def test_shallow_clone(tmp_path: Path) -> None:
    origin = make_repo(tmp_path / "origin", {"train.py": SCRIPT})
    (Path(str(origin.working_tree_dir)) / "notes.txt").write_text("two\n")
    origin.index.add(["notes.txt"])
    origin.index.commit("second")
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin.working_tree_dir}",
         str(clone))
    assert (clone / ".git" / "shallow").is_file()
    _fix(clone / "train.py")
    assert _git(clone, "rev-list", "--count", "autofix/t").strip() == "2"  # the shallow tip + fix


def test_script_inside_a_submodule(tmp_path: Path) -> None:
    sub = make_repo(tmp_path / "sub", {"train.py": SCRIPT})
    outer = make_repo(tmp_path / "outer", {"README.md": "outer\n"})
    root = Path(str(outer.working_tree_dir))
    _git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q",
         f"file://{sub.working_tree_dir}", "exercises")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "add exercises")
    outer_before = _state(root)
    repo = _fix(root / "exercises" / "train.py")
    assert Path(str(repo.working_tree_dir)).resolve() == (root / "exercises").resolve()
    assert _state(root) == outer_before  # the outer repository sees no change
    assert _git(root, "status", "--porcelain") == ""
    assert "autofix/t" not in _git(root, "branch", "--list")


def test_sparse_checkout(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"course/train.py": SCRIPT,
                                          "data/big.txt": "rows\n" * 100})
    root = Path(str(repo.working_tree_dir))
    _git(root, "sparse-checkout", "set", "course")
    assert not (root / "data").exists()
    _fix(root / "course" / "train.py")
    _same_blob(root, "data/big.txt")  # out of the cone, still on the branch
    assert _git(root, "sparse-checkout", "list").split() == ["course"]


def test_lfs_pointer_files(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {
        "train.py": SCRIPT, "model.bin": POINTER,
        ".gitattributes": "*.bin filter=lfs diff=lfs merge=lfs -text\n"})
    root = Path(str(repo.working_tree_dir))
    _fix(root / "train.py")
    _same_blob(root, "model.bin")  # the pointer is never smudged or cleaned by a fix
    assert _git(root, "show", "autofix/t:model.bin") == POINTER
