"""Two sessions on one repository at once (issue 27, point 6): on the same branch the
second is refused at once (exit 2, naming the first one's pid, nothing written), on
different branches both go on; a linked worktree shares the lock of its repository; a
read-only ``.git`` is a clear error (exit 2) before any run (:mod:`autofix.vcs.locks`)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import git
import pytest

from autofix.errors import EXIT_USAGE, AutofixError
from autofix.vcs.locks import lock_branch
from autofix.vcs.repo import common_dir, prepare_branch

from .conftest import AUTOFIX, make_repo

SCRIPT = "print('hello')\n"


def test_one_writer_per_branch(tmp_path: Path) -> None:
    first = lock_branch(tmp_path, "autofix/train")
    with pytest.raises(AutofixError) as refused:
        lock_branch(tmp_path, "autofix/train")
    assert str(refused.value) == (f"another autofix session (pid {os.getpid()}) is writing "
                                  "branch autofix/train in this repository")
    assert refused.value.exit_code == EXIT_USAGE and "--branch" in refused.value.hint
    other = lock_branch(tmp_path, "autofix/other")  # another branch: side by side
    first.release()
    again = lock_branch(tmp_path, "autofix/train")  # the holder ended: never a stale lock
    again.release()
    other.release()


def test_two_sessions_on_one_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"train.py": SCRIPT})
    script = Path(str(repo.working_tree_dir)) / "train.py"
    first = prepare_branch(repo, script, "autofix/train", resume=False)
    refs = {h.name: h.commit.hexsha for h in repo.heads}
    with pytest.raises(AutofixError, match="another autofix session .* is writing branch "
                                           "autofix/train"):
        prepare_branch(repo, script, "autofix/train", resume=False)
    assert {h.name: h.commit.hexsha for h in repo.heads} == refs  # the refused one wrote nothing
    second = prepare_branch(repo, script, "autofix/second", resume=False)
    assert second.branch == "autofix/second"
    # a linked worktree shares the repository's git folder, so its lock too
    linked = tmp_path / "linked"
    repo.git.worktree("add", "--detach", str(linked))
    other = git.Repo(linked)
    assert common_dir(other) == common_dir(repo)
    with pytest.raises(AutofixError, match="another autofix session"):
        prepare_branch(other, linked / "train.py", "autofix/train", resume=False)
    first.close()
    second.close()


@pytest.mark.process
def test_a_read_only_git_folder_is_a_clear_error(tmp_path: Path) -> None:
    """``.git`` bind-mounted read-only in a mount namespace of its own (``unshare -m``;
    root ignores file modes, so a chmod would prove nothing)."""
    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("needs unshare -m (mount namespaces)")
    repo = make_repo(tmp_path / "repo", {"train.py": SCRIPT})
    root = Path(str(repo.working_tree_dir))
    dot_git = root / ".git"
    before = sorted(p.relative_to(dot_git).as_posix() for p in dot_git.rglob("*"))
    inner = (f"mount --bind {dot_git} {dot_git} && mount -o remount,ro,bind {dot_git} && "
             'exec "$@"')
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", inner, "sh", *AUTOFIX, "train.py"], cwd=root,
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"cannot write to the repository's git folder {dot_git.resolve()}" in done.stderr
    assert "Traceback" not in done.stderr and "--dry-run" in done.stderr
    assert "run 1" not in done.stdout  # refused before any run
    assert sorted(p.relative_to(dot_git).as_posix() for p in dot_git.rglob("*")) == before
