"""Batch mode: many scripts, one branch each, concurrent workers on one repository."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import git
import pytest

from .conftest import TEST_SCRIPTS, run_autofix, snapshot, trailers

Repo = Callable[[dict[str, str | Path]], git.Repo]

DRIFT = ("from transformers import TrainingArguments\n"
         "import tempfile\n"
         "args = TrainingArguments(tempfile.mkdtemp(), evaluation_strategy='epoch',\n"
         "                         report_to='none')\n"
         "print('arguments ok:', args.eval_strategy)\n")

#: These start processes (the CLI, a child, a sandbox) and train nothing.
pytestmark = pytest.mark.process


@pytest.mark.e2e  # the drift scripts import the real transformers
def test_four_workers_on_one_repository(scratch_repo: Repo) -> None:
    files: dict[str, str | Path] = {f"ex/drift_{i}.py": DRIFT for i in range(3)}
    files["ex/hang.py"] = "import time\ntime.sleep(600)\n"
    files["ex/broken.py"] = TEST_SCRIPTS / "syntax_error.py"
    files["ex/ok.py"] = TEST_SCRIPTS / "clean.py"
    repo = scratch_repo(files)
    root = Path(str(repo.working_tree_dir))
    before = snapshot(repo)
    # the hang ends at the timeout: 30 s leaves the drift scripts (a transformers import
    # and one TrainingArguments) room on 2 busy cores
    done = run_autofix(["batch", "ex", "--jobs", "4", "--timeout", "30",
                        "--report", "../batch.json"], root)
    assert done.returncode == 1, done.stdout + done.stderr  # hang cannot be fixed
    assert snapshot(repo) == before
    report = json.loads((root.parent / "batch.json").read_text())
    status = {s["path"]: s["status"] for s in report["scripts"]}
    assert status == {**{f"ex/drift_{i}.py": "fixed" for i in range(3)},
                      "ex/hang.py": "gave_up", "ex/broken.py": "error", "ex/ok.py": "clean"}
    for i in range(3):
        branch = f"autofix/ex/drift_{i}"
        assert trailers(repo, branch, "main") == ["api-drift"]
        source = (repo.commit(branch).tree / f"ex/drift_{i}.py").data_stream.read().decode()
        assert "eval_strategy='epoch'" in source and "evaluation_strategy" not in source
        assert repo.commit(branch).parents[0].hexsha == before["head"]
    assert sorted(h.name for h in repo.heads) == sorted(
        ["main", *(f"autofix/ex/drift_{i}" for i in range(3))])
    broken = next(s for s in report["scripts"] if s["path"] == "ex/broken.py")
    assert broken["runs"] == [] and broken["reason"].startswith(
        "ex/broken.py, line 4, column 10: the script does not parse")  # never run
    hang = next(s for s in report["scripts"] if s["path"] == "ex/hang.py")
    assert hang["runs"][0]["category"] == "timeout"
    markdown = (root.parent / "batch.md").read_text()
    assert "| `ex/drift_0.py` | ran | 1 |" in markdown  # fixed, but nothing trained: "ran"
    assert "## `ex/hang.py`: gave_up" in markdown
    # found by the API check alongside run 1: the fix names no run, and its evidence is the
    # error the installed library would raise
    assert "(before the first run: `TypeError: TrainingArguments.__init__() got an " \
        "unexpected keyword argument 'evaluation_strategy'`)" in markdown


def test_batch_bad_paths(scratch_repo: Repo) -> None:
    repo = scratch_repo({"a.py": TEST_SCRIPTS / "clean.py"})
    done = run_autofix(["batch", "nothing-here"], Path(str(repo.working_tree_dir)))
    assert done.returncode == 2
    assert "no .py or .ipynb file there" in done.stderr
