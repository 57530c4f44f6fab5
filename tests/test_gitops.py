"""The branch writer: fixes land on the branch only; the user's checkout is untouched."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import git
import pytest

from autofix.errors import AutofixError
from autofix.vcs.repo import open_repo, prepare_branch

from .conftest import snapshot

Repo = Callable[[dict[str, str | Path]], git.Repo]


def test_commit_fix_touches_only_the_branch(scratch_repo: Repo) -> None:
    repo = scratch_repo({"train.py": "a = 1\n", "other.txt": "keep\n"})
    before = snapshot(repo)
    script = Path(str(repo.working_tree_dir)) / "train.py"
    fb = prepare_branch(repo, script, "fixes", resume=False)
    assert "fixes" not in repo.heads  # created lazily, at the first fix
    sha = fb.commit_fix("a = 2\n", "autofix: x\n\nAutofix-Category: c\n")
    assert snapshot(repo) == before
    assert repo.heads["fixes"].commit.hexsha == sha
    commit = repo.commit(sha)
    assert commit.parents[0].hexsha == before["head"]
    assert (commit.tree / "train.py").data_stream.read() == b"a = 2\n"
    assert (commit.tree / "other.txt").data_stream.read() == b"keep\n"
    assert commit.author.email == "test@example.com"


def test_uncommitted_changes_are_snapshotted_first(scratch_repo: Repo) -> None:
    repo = scratch_repo({"train.py": "a = 1\n"})
    script = Path(str(repo.working_tree_dir)) / "train.py"
    script.write_text("a = 1  # edited, not committed\n")
    before = snapshot(repo)
    fb = prepare_branch(repo, script, "fixes", resume=False)
    assert fb.source == "a = 1  # edited, not committed\n"
    fb.commit_fix("a = 3\n", "autofix: y")
    assert snapshot(repo) == before
    fix, snap = list(repo.iter_commits("fixes", max_count=2))
    assert snap.summary.startswith("autofix: snapshot train.py")
    assert (snap.tree / "train.py").data_stream.read() == b"a = 1  # edited, not committed\n"
    assert (fix.tree / "train.py").data_stream.read() == b"a = 3\n"


def test_drop_last_deletes_a_branch_left_without_fixes(scratch_repo: Repo) -> None:
    repo = scratch_repo({"train.py": "a = 1\n"})
    script = Path(str(repo.working_tree_dir)) / "train.py"
    fb = prepare_branch(repo, script, "fixes", resume=False)
    first = fb.commit_fix("a = 2\n", "autofix: one")
    fb.commit_fix("a = 3\n", "autofix: two")
    fb.drop_last()
    assert repo.heads["fixes"].commit.hexsha == first
    assert fb.source == "a = 2\n"
    fb.drop_last()
    assert "fixes" not in repo.heads


def test_existing_branch_needs_resume(scratch_repo: Repo) -> None:
    repo = scratch_repo({"train.py": "a = 1\n"})
    script = Path(str(repo.working_tree_dir)) / "train.py"
    prepare_branch(repo, script, "fixes", resume=False).commit_fix("a = 2\n", "autofix: one")
    with pytest.raises(AutofixError, match="already exists"):
        prepare_branch(repo, script, "fixes", resume=False)
    fb = prepare_branch(repo, script, "fixes", resume=True)
    assert fb.source == "a = 2\n"
    fb.commit_fix("a = 3\n", "autofix: two")
    assert len(list(repo.iter_commits("main..fixes"))) == 2


@pytest.mark.parametrize("name", ["main", "bad..name", "-x"])
def test_branch_name_checks(scratch_repo: Repo, name: str) -> None:
    repo = scratch_repo({"train.py": "a = 1\n"})
    script = Path(str(repo.working_tree_dir)) / "train.py"
    with pytest.raises(AutofixError):
        prepare_branch(repo, script, name, resume=False)


def test_concurrent_move_is_detected(scratch_repo: Repo) -> None:
    repo = scratch_repo({"train.py": "a = 1\n"})
    script = Path(str(repo.working_tree_dir)) / "train.py"
    fb = prepare_branch(repo, script, "fixes", resume=False)
    fb.commit_fix("a = 2\n", "autofix: one")
    repo.git.update_ref("refs/heads/fixes", "main")  # someone else moves the branch
    with pytest.raises(AutofixError, match="moved"):
        fb.commit_fix("a = 3\n", "autofix: two")


def test_not_a_repo_and_init(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text("a = 1\n")
    with pytest.raises(AutofixError, match="not inside a git repository"):
        open_repo(script)
    repo = open_repo(script, init=True)
    assert [p for p, _ in repo.index.entries] == ["train.py"]
    assert (repo.head.commit.tree / "train.py").data_stream.read() == b"a = 1\n"
    assert not repo.is_dirty(untracked_files=True)


def test_branch_checked_out_in_another_worktree_is_refused(scratch_repo: Repo,
                                                           tmp_path: Path) -> None:
    repo = scratch_repo({"train.py": "a = 1\n"})
    script = Path(str(repo.working_tree_dir)) / "train.py"
    prepare_branch(repo, script, "fixes", resume=False).commit_fix("a = 2\n", "autofix: one")
    repo.git.worktree("add", str(tmp_path / "review"), "fixes")
    with pytest.raises(AutofixError, match="checked out"):
        prepare_branch(repo, script, "fixes", resume=True)


def test_crlf_script_is_not_snapshotted(scratch_repo: Repo) -> None:
    repo = scratch_repo({"train.py": "a = 1\r\nb = 2\r\n"})
    script = Path(str(repo.working_tree_dir)) / "train.py"
    fb = prepare_branch(repo, script, "fixes", resume=False)
    assert not fb.snapshot_pending
    assert fb.source == "a = 1\r\nb = 2\r\n"


def test_branch_clashing_with_an_existing_one(scratch_repo: Repo) -> None:
    repo = scratch_repo({"train.py": "a = 1\n"})
    repo.create_head("autofix")
    script = Path(str(repo.working_tree_dir)) / "train.py"
    with pytest.raises(AutofixError, match="clashes with the existing branch 'autofix'"):
        prepare_branch(repo, script, "autofix/train", resume=False)
    with pytest.raises(AutofixError, match="ambiguous"):
        prepare_branch(repo, script, "@", resume=False)


def test_a_fix_to_one_of_the_users_modules_lands_on_the_branch_only(scratch_repo: Repo) -> None:
    repo = scratch_repo({"train.py": "import model\n", "model.py": "N = 2\n"})
    root = Path(str(repo.working_tree_dir))
    (root / "model.py").write_text("N = 2  # edited\n")  # uncommitted: snapshotted first
    before = snapshot(repo)
    fb = prepare_branch(repo, root / "train.py", "fixes", resume=False)
    assert fb.read("model.py") == "N = 2  # edited\n"
    fb.commit_fix("N = 3\n", "autofix: three\n\nAutofix-Category: c\n", "model.py")
    assert snapshot(repo) == before
    assert fb.files == {"model.py": "N = 3\n"} and fb.read("model.py") == "N = 3\n"
    fix, snap = list(repo.iter_commits("fixes", max_count=2))
    assert snap.summary.startswith("autofix: snapshot model.py")
    assert (fix.tree / "model.py").data_stream.read() == b"N = 3\n"
    assert (fix.tree / "train.py").data_stream.read() == b"import model\n"
    fb.commit_fix("import model  # fixed\n", "autofix: four")
    fb.drop_last()
    assert fb.source == "import model\n" and fb.files == {"model.py": "N = 3\n"}
    fb.drop_last()  # the branch is left with no fix: deleted, the user's file again
    assert "fixes" not in repo.heads and fb.read("model.py") == "N = 2  # edited\n"
