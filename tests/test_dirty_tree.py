"""Uncommitted changes (issue 27, point 1): autofix says at the start which files are
uncommitted and what it does with each; the summary gives only merge commands that work
for the tree as it is (each one run here, in a copy of the repository), or, with
``--clean-tree``, autofix refuses to start (exit 2, a hint). The script is
``tests/scripts/cuda_literal`` (a stand-in for torch, so nothing is imported or trained)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import git
import pytest

from autofix.vcs.repo import prepare_branch
from autofix.vcs.tree import dirty_files, merge_advice

from .conftest import TEST_SCRIPTS, make_repo, run_autofix, snapshot

pytestmark = pytest.mark.process

PROJECT = TEST_SCRIPTS / "cuda_literal"
FILES: dict[str, str | Path] = {"train.py": PROJECT / "train.py",
                                "torch.py": PROJECT / "torch.py"}
EDIT = "# my own edit, not committed\n"
#: The stand-in torch module is imported from the repository: no __pycache__ there.
QUIET = {"PYTHONDONTWRITEBYTECODE": "1"}


def shell(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True,
                          timeout=60)


def suggested(stdout: str) -> tuple[str, str]:
    """The merge command line and the take-the-files command of a summary."""
    merge = re.search(r"^    (git stash push .*)$", stdout, re.M)
    take = re.search(r"without the history: (git checkout .*)$", stdout, re.M)
    assert merge and take, stdout
    return merge.group(1), take.group(1)


def branch_file(root: Path, branch: str, name: str = "train.py") -> bytes:
    return subprocess.run(["git", "show", f"{branch}:{name}"], cwd=root, capture_output=True,
                          check=True).stdout


@pytest.mark.parametrize("state", ["modified", "untracked"])
def test_a_dirty_script_gets_merge_commands_that_work(tmp_path: Path, state: str) -> None:
    files = dict(FILES)
    if state == "untracked":
        del files["train.py"]
    repo = make_repo(tmp_path / "repo", files)
    root = Path(str(repo.working_tree_dir))
    if state == "untracked":
        shutil.copy(PROJECT / "train.py", root / "train.py")
    with (root / "train.py").open("a") as fh:
        fh.write(EDIT)
    (root / "notes.txt").write_text("mine\n")
    before = snapshot(repo)
    done = run_autofix(["train.py"], root, env=QUIET)
    assert done.returncode == 0, done.stdout + done.stderr
    first = done.stdout.splitlines()[0]
    assert first == (f"uncommitted: train.py ({state}) is run as you have it; the branch's "
                     "first commit will be a snapshot of it, the fixes follow on top")
    assert "uncommitted: notes.txt (untracked): read by the runs as they are, never " \
           "committed" in done.stdout
    assert snapshot(repo) == before  # the tree and the index as they were
    assert "merge: git merge" not in done.stdout
    merge, take = suggested(done.stdout)
    fixed = branch_file(root, "autofix/train")
    assert EDIT.encode() in fixed and b"torch.cuda.is_available()" in fixed

    plain = tmp_path / "plain"
    shutil.copytree(root, plain)
    refused = shell("git merge autofix/train", plain)  # what the summary used to suggest
    assert refused.returncode != 0

    for name, command in (("merged", merge), ("taken", take)):
        copy = tmp_path / name
        shutil.copytree(root, copy)
        ran = shell(command, copy)
        assert ran.returncode == 0, (command, ran.stdout, ran.stderr)
        assert (copy / "train.py").read_bytes() == fixed  # the user's edit and the fix
        assert (copy / "notes.txt").read_text() == "mine\n"
    merged = git.Repo(tmp_path / "merged")
    assert merged.head.commit.hexsha == merged.commit("autofix/train").hexsha
    assert merged.git.stash("list") == ""


def test_a_clean_script_next_to_other_uncommitted_files_merges_plainly(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {**FILES, "utils.py": "X = 1\n"})
    root = Path(str(repo.working_tree_dir))
    (root / "utils.py").write_text("X = 2  # mine\n")
    done = run_autofix(["train.py"], root, env=QUIET)
    assert done.returncode == 0, done.stderr
    assert "uncommitted: utils.py (modified): read by the runs as they are" in done.stdout
    assert "merge: git merge autofix/train" in done.stdout
    ran = shell("git merge autofix/train", root)
    assert ran.returncode == 0, ran.stderr
    assert (root / "utils.py").read_text() == "X = 2  # mine\n"


def test_clean_tree_refuses_a_dirty_tree_before_any_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    root = Path(str(repo.working_tree_dir))
    with (root / "train.py").open("a") as fh:
        fh.write(EDIT)
    done = run_autofix(["train.py", "--clean-tree"], root, env=QUIET)
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == ("error: --clean-tree: uncommitted changes: "
                                           "train.py (modified)")
    assert "hint: commit them (git add train.py && git commit) or stash them" in done.stderr
    assert "run 1" not in done.stdout and [h.name for h in repo.heads] == ["main"]
    (root / "train.py").write_bytes((PROJECT / "train.py").read_bytes())
    (root / "out.log").write_text("an untracked file is fine\n")
    done = run_autofix(["train.py", "--clean-tree"], root, env=QUIET)
    assert done.returncode == 0, done.stderr
    assert "merge: git merge autofix/train" in done.stdout


def test_an_edit_after_the_session_is_named_and_never_stashed_away(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"train.py": "a = 1\n"})
    root = Path(str(repo.working_tree_dir))
    (root / "train.py").write_text("a = 1\nb = 2\n")
    branch = prepare_branch(repo, root / "train.py", "autofix/train", resume=False)
    branch.commit_fix("a = 1\nb = 3\n", "autofix: fix b\n\nAutofix-Category: x\n"
                                        "Autofix-Recipe: x")
    branch.close()
    advice = merge_advice(repo, "autofix/train")
    assert advice.blocking == ("train.py",) and advice.edited_since == ()
    (root / "train.py").write_text("a = 1\nb = 2\nc = 4\n")  # edited again afterwards
    advice = merge_advice(repo, "autofix/train")
    assert advice.edited_since == ("train.py",)
    assert [(d.path, d.state) for d in dirty_files(repo)] == [("train.py", "modified")]
