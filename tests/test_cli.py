"""Bad input through the real CLI: a clear message, the right exit code, nothing lost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import git
import pytest

from .conftest import AUTOFIX, TEST_SCRIPTS, run_autofix, snapshot
from .test_runner import alive

Repo = Callable[[dict[str, str | Path]], git.Repo]

#: These start processes (the CLI, a child, a sandbox) and train nothing.
pytestmark = pytest.mark.process


def workdir(repo: git.Repo) -> Path:
    return Path(str(repo.working_tree_dir))


def test_missing_path(tmp_path: Path) -> None:
    done = run_autofix(["nope.py"], tmp_path)
    assert done.returncode == 2
    assert "nope.py: no such file" in done.stderr


def test_directory(tmp_path: Path) -> None:
    done = run_autofix([str(tmp_path)], tmp_path)
    assert done.returncode == 2
    assert "is a directory" in done.stderr


def test_not_python(scratch_repo: Repo) -> None:
    repo = scratch_repo({"notes.txt": "hello\n"})
    done = run_autofix(["notes.txt"], workdir(repo))
    assert done.returncode == 2
    assert "not a Python script" in done.stderr


def test_not_a_repo_gives_hint_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "clean.py").write_text((TEST_SCRIPTS / "clean.py").read_text())
    done = run_autofix(["clean.py"], tmp_path)
    assert done.returncode == 2
    assert "not inside a git repository" in done.stderr and "--init" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clean.py"]


def test_init_then_clean_script(tmp_path: Path) -> None:
    (tmp_path / "clean.py").write_text((TEST_SCRIPTS / "clean.py").read_text())
    done = run_autofix(["clean.py", "--init", "--report", "r.json"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    repo = git.Repo(tmp_path)
    assert [c.summary for c in repo.iter_commits()] == ["Add clean.py (autofix --init)"]
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["status"] == "clean" and report["branch"] is None


def test_clean_script_makes_no_branch(scratch_repo: Repo) -> None:
    repo = scratch_repo({"clean.py": TEST_SCRIPTS / "clean.py"})
    before = snapshot(repo)
    done = run_autofix(["clean.py", "--report", "../r.json"], workdir(repo))
    assert done.returncode == 0
    assert "nothing to fix" in done.stdout
    assert [h.name for h in repo.heads] == ["main"]
    assert snapshot(repo) == before
    report = json.loads((workdir(repo).parent / "r.json").read_text())
    assert report["status"] == "clean"
    assert [r["outcome"] for r in report["runs"]] == ["ok"]


def test_a_script_that_does_not_parse_is_refused_before_any_run(scratch_repo: Repo) -> None:
    """Exit 2 before any run is announced: one line with the file, the line, the column
    and the parser's own message; no branch, no run in the report."""
    repo = scratch_repo({"broken.py": TEST_SCRIPTS / "syntax_error.py"})
    before = snapshot(repo)
    done = run_autofix(["broken.py", "--report", "../r.json"], workdir(repo))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [
        "error: broken.py, line 4, column 10: the script does not parse: invalid syntax "
        "(nothing was run)"]
    assert "running the script" not in done.stdout and "run 1" not in done.stdout
    assert [h.name for h in repo.heads] == ["main"]
    assert snapshot(repo) == before
    report = json.loads((workdir(repo).parent / "r.json").read_text())
    assert report["status"] == "error" and report["runs"] == [] and report["fixes"] == []
    assert "broken.py, line 4" in report["reason"]


def test_a_notebook_cell_that_does_not_parse_is_named_by_cell(scratch_repo: Repo) -> None:
    """A notebook's code cells are parsed as the program autofix runs (magics and shell
    lines set aside): the location is the cell and its own line."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# train"),
                nbformat.v4.new_code_cell("%pip install torch\nimport os"),
                nbformat.v4.new_code_cell("x = 1\nprint 'hello'")]
    repo = scratch_repo({"train.ipynb": nbformat.writes(nb)})
    done = run_autofix(["train.ipynb"], workdir(repo))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [
        "error: train.ipynb, cell 2, line 2, column 1: the script does not parse: Missing "
        "parentheses in call to 'print'. Did you mean print(...)? (nothing was run)"]
    assert "running the script" not in done.stdout


def test_hanging_script_is_killed_at_timeout(scratch_repo: Repo) -> None:
    repo = scratch_repo({"hang.py": TEST_SCRIPTS / "hang_with_child.py"})
    pid_file = workdir(repo).parent / "pid"
    started = time.monotonic()
    done = run_autofix(["hang.py", "--timeout", "3", "--", str(pid_file)], workdir(repo))
    assert done.returncode == 1
    assert time.monotonic() - started < 60
    assert "timeout" in done.stdout and "killed after" in done.stdout
    time.sleep(0.2)
    assert not alive(int(pid_file.read_text()))
    assert [h.name for h in repo.heads] == ["main"]


def test_megabytes_of_output(scratch_repo: Repo) -> None:
    repo = scratch_repo({"loud.py": TEST_SCRIPTS / "loud.py"})
    done = run_autofix(["loud.py"], workdir(repo))
    assert done.returncode == 1
    assert "RuntimeError: done printing" in done.stdout
    assert len(done.stdout) < 100_000  # the script's 20 MB are not echoed


def test_script_reading_stdin_does_not_hang(scratch_repo: Repo) -> None:
    repo = scratch_repo({"ask.py": TEST_SCRIPTS / "reads_stdin.py"})
    done = run_autofix(["ask.py", "--timeout", "60"], workdir(repo))
    assert done.returncode == 1
    assert "EOFError" in done.stdout
    assert "reads standard input" in done.stdout


def test_branch_exists_without_resume(scratch_repo: Repo) -> None:
    repo = scratch_repo({"clean.py": TEST_SCRIPTS / "clean.py"})
    repo.create_head("fixes")
    done = run_autofix(["clean.py", "--branch", "fixes"], workdir(repo))
    assert done.returncode == 2
    assert "already exists" in done.stderr and "--resume" in done.stderr


def test_bad_python(scratch_repo: Repo) -> None:
    repo = scratch_repo({"clean.py": TEST_SCRIPTS / "clean.py"})
    done = run_autofix(["clean.py", "--python", "/no/such/python"], workdir(repo))
    assert done.returncode == 2
    assert "--python /no/such/python cannot be run: no such executable file" in done.stderr


def test_ctrl_c_kills_child_and_exits_130(scratch_repo: Repo) -> None:
    repo = scratch_repo({"hang.py": TEST_SCRIPTS / "hang_with_child.py"})
    before = snapshot(repo)
    pid_file = workdir(repo).parent / "pid"
    proc = subprocess.Popen([*AUTOFIX, "hang.py", "--report", "../r.json", "--", str(pid_file)],
                            cwd=workdir(repo), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ})
    deadline = time.monotonic() + 60
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pid_file.exists(), "the script never started"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, out + err
    assert "interrupted" in out
    time.sleep(0.2)
    assert not alive(int(pid_file.read_text()))
    assert snapshot(repo) == before
    report = json.loads((workdir(repo).parent / "r.json").read_text())
    assert report["interrupted"] is True


def test_recipes_command_lists_recipes() -> None:
    done = subprocess.run([*AUTOFIX, "recipes", "--markdown"], capture_output=True, text=True,
                          check=True)
    assert "| `raw-dataset` |" in done.stdout


def test_sigterm_kills_the_child_too(scratch_repo: Repo) -> None:
    repo = scratch_repo({"hang.py": TEST_SCRIPTS / "hang_with_child.py"})
    pid_file = workdir(repo).parent / "pid"
    proc = subprocess.Popen([*AUTOFIX, "hang.py", "--", str(pid_file)], cwd=workdir(repo),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    assert proc.returncode == 130
    time.sleep(0.2)
    assert not alive(int(pid_file.read_text()))


def test_report_path_is_checked_before_any_run(scratch_repo: Repo) -> None:
    repo = scratch_repo({"clean.py": TEST_SCRIPTS / "clean.py"})
    done = run_autofix(["clean.py", "--report", str(workdir(repo))], workdir(repo))
    assert done.returncode == 2
    assert "is a directory" in done.stderr
    assert "run 1" not in done.stdout


def test_default_branch_name_is_made_valid(scratch_repo: Repo) -> None:
    repo = scratch_repo({"my script.py": "raise ValueError('x')\n"})
    done = run_autofix(["my script.py", "--report", "../r.json"], workdir(repo))
    assert done.returncode == 1  # unknown failure, but no branch-name error
    assert json.loads((workdir(repo).parent / "r.json").read_text())["status"] == "gave_up"


def test_options_may_come_before_the_script(scratch_repo: Repo) -> None:
    repo = scratch_repo({"clean.py": TEST_SCRIPTS / "clean.py"})
    done = run_autofix(["--branch", "zz", "clean.py"], workdir(repo))
    assert done.returncode == 0, done.stderr
