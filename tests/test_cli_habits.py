"""Issue 11 through the real CLI, without training: CLI habits, log/undo/branches, the
working folder and the missing-file category, the interrupted run in the JSON report."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import git
import jsonschema
import pytest

from autofix.loop.messages import commit_message
from autofix.reports.formats import SCHEMA_PATH
from autofix.toolkit import Recipe
from autofix.types import Applied, Diagnosis
from autofix.vcs.repo import prepare_branch

from .conftest import AUTOFIX, ROOT, TEST_SCRIPTS, run_autofix, snapshot

Repo = Callable[[dict[str, str | Path]], git.Repo]
SCHEMA = json.loads(SCHEMA_PATH.read_text())

#: These start processes (the CLI, a child, a sandbox) and train nothing.
pytestmark = pytest.mark.process


def workdir(repo: git.Repo) -> Path:
    return Path(str(repo.working_tree_dir))


def test_version_and_short_help(tmp_path: Path) -> None:
    done = run_autofix(["--version"], tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("autofix 0.")
    for args in (["-h"], ["fix", "-h"], ["batch", "-h"]):
        done = run_autofix(args, tmp_path)
        assert done.returncode == 0 and "Usage: autofix" in done.stdout, args


def test_boolean_flags_are_shown_as_flags(tmp_path: Path) -> None:
    out = run_autofix(["fix", "--help"], tmp_path).stdout
    for flag in ("--full", "--resume", "--init", "--dry-run"):
        line = next(ln for ln in out.splitlines() if ln.strip().startswith(flag))
        assert "bool" not in line and "<" not in line.split()[1 if len(line.split()) > 1
                                                                  else 0], line
    assert "<bool>" not in out and "--only RECIPE" in out
    assert "folder you call autofix from" in " ".join(out.split())


def test_forgotten_double_dash_shows_the_right_command_line(tmp_path: Path) -> None:
    done = run_autofix(["train.py", "--epochs", "1"], tmp_path)
    assert done.returncode == 2
    assert "autofix train.py -- --epochs 1" in done.stderr
    assert "Possible options" not in done.stderr
    done = run_autofix(["train.py", "--branch", "b", "--lr", "3", "--", "--x"], tmp_path)
    assert done.returncode == 2
    assert "autofix train.py --branch b -- --lr 3 --x" in done.stderr


def test_unknown_only_or_skip_recipe_is_a_usage_error(scratch_repo: Repo) -> None:
    repo = scratch_repo({"clean.py": TEST_SCRIPTS / "clean.py"})
    done = run_autofix(["clean.py", "--only", "no-such-recipe"], workdir(repo))
    assert done.returncode == 2 and "unknown recipe: no-such-recipe" in done.stderr
    assert "run 1" not in done.stdout


def test_skip_leaves_the_fault_unfixed(scratch_repo: Repo) -> None:
    """``--skip`` of the only recipe for the fault: nothing is committed, exit 1."""
    repo = scratch_repo({"t.py": "from transformers import AdamW\n"})
    done = run_autofix(["t.py", "--skip", "drift-adamw", "--report", "../r.json"],
                       workdir(repo), env={"OMP_NUM_THREADS": "1"})
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads((workdir(repo).parent / "r.json").read_text())
    jsonschema.validate(report, SCHEMA)
    assert report["runs"][0]["category"] == "api-drift" and report["fixes"] == []
    assert [h.name for h in repo.heads] == ["main"]


def test_shell_completion_is_available_and_documented(tmp_path: Path) -> None:
    command = " ".join([*AUTOFIX, "--show-completion"]) + "; true"  # bash stays the parent
    done = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert "complete -o" in done.stdout and "_autofix_completion" in done.stdout, done.stderr
    assert "autofix --install-completion" in (ROOT / "README.md").read_text()


# -- log / undo / branches --------------------------------------------------------------

class _Fake(Recipe):
    abstract = True  # a stand-in for the commit message only, never registered
    id = "drift-adamw"
    category = "api-drift"
    title = "import AdamW from torch.optim"


def _fix_branch(repo: git.Repo, name: str, fixes: int) -> list[str]:
    """``fixes`` autofix commits on ``name``, written by the real gitops and messages."""
    script = workdir(repo) / "t.py"
    branch = prepare_branch(repo, script, name, resume=False)
    shas = []
    for i in range(fixes):
        diag = Diagnosis("api-drift", "ImportError: x", str(script), 1, "import x")
        # the branch name in the content: two branches never share a commit by chance
        outcome = Applied(branch.source + f"# fix {i} on {name}\n", f"fix {i}")
        shas.append(branch.commit_fix(outcome.source,
                                      commit_message(_Fake, outcome, diag, i + 1, "t.py")))
    return shas


def test_log_undo_branches_prune(scratch_repo: Repo) -> None:
    repo = scratch_repo({"t.py": "print(1)\n"})
    cwd = workdir(repo)
    shas = _fix_branch(repo, "autofix/t", 2)
    _fix_branch(repo, "autofix/merged", 1)
    repo.git.merge("autofix/merged", "--no-edit")
    repo.create_head("plain")
    before = snapshot(repo)

    log = run_autofix(["log", "autofix/t"], cwd)
    assert log.returncode == 0, log.stderr
    lines = log.stdout.splitlines()
    assert [ln.split()[0] for ln in lines] == [shas[1][:8], shas[0][:8]]
    assert "api-drift (drift-adamw)" in lines[0]

    listing = run_autofix(["branches"], cwd)
    assert "autofix/t" in listing.stdout and "autofix/merged" in listing.stdout
    assert "plain" not in listing.stdout

    undo = run_autofix(["undo", "autofix/t"], cwd)
    assert undo.returncode == 0, undo.stderr
    assert repo.heads["autofix/t"].commit.hexsha == shas[0]
    assert f"dropped {shas[1][:8]}" in undo.stdout

    refused = run_autofix(["undo", "plain"], cwd)  # a branch autofix did not make
    assert refused.returncode == 2 and "plain is not an autofix branch" in refused.stderr
    _fix_branch(repo, "autofix/u", 1)  # then a commit of the user's on top
    tree = repo.heads["autofix/u"].commit.tree.hexsha
    mine = repo.git.commit_tree(tree, "-p", "autofix/u", "-m", "my own change")
    repo.git.update_ref("refs/heads/autofix/u", mine)
    refused = run_autofix(["undo", "autofix/u"], cwd)  # tip is not autofix's
    assert refused.returncode == 2 and "not an autofix fix commit" in refused.stderr
    assert repo.heads["autofix/u"].commit.hexsha == mine
    refused = run_autofix(["undo", "main"], cwd)  # checked out
    assert refused.returncode == 2 and "main is not an autofix branch" in refused.stderr

    pruned = run_autofix(["branches", "--prune"], cwd)
    assert "deleted autofix/merged" in pruned.stdout
    assert sorted(h.name for h in repo.heads) == ["autofix/t", "autofix/u", "main", "plain"]
    assert snapshot(repo) == before  # work tree, index, HEAD untouched


# -- working folder and missing files ----------------------------------------------------

READS_DATA = "from pathlib import Path\nprint(Path('data/train.txt').read_text())\n"


def test_missing_file_names_path_and_folder_in_single_and_batch(scratch_repo: Repo) -> None:
    """The script runs in the caller's folder in both modes; the missing data file is its
    own category with the path and the folder it was looked up from."""
    repo = scratch_repo({"ex/read.py": READS_DATA, "ex/data/train.txt": "hello\n"})
    root = workdir(repo)
    inside = run_autofix(["read.py"], root / "ex")
    assert inside.returncode == 0, inside.stdout + inside.stderr  # found from ex/
    single = run_autofix(["ex/read.py", "--report", "../r.json"], root)
    assert single.returncode == 1
    report = json.loads((root.parent / "r.json").read_text())
    jsonschema.validate(report, SCHEMA)
    run = report["runs"][0]
    assert run["category"] == "missing-file"
    assert run["evidence"] == ("missing file 'data/train.txt', looked up from the "
                               "repository's top folder")
    assert "relative paths are looked up from the folder" in single.stdout
    batch = run_autofix(["batch", "ex", "--jobs", "1", "--report", "../b.json"], root)
    assert batch.returncode == 1
    assert batch.stdout.count("┃ script") == 1  # one table, at the end
    assert "ex/read.py: run 1" in batch.stdout
    rows = json.loads((root.parent / "b.json").read_text())
    jsonschema.validate(rows, SCHEMA)
    assert rows["scripts"][0]["runs"][0]["category"] == "missing-file"


def test_interrupted_run_is_in_the_json_report(scratch_repo: Repo) -> None:
    repo = scratch_repo({"hang.py": TEST_SCRIPTS / "hang_with_child.py"})
    pid_file = workdir(repo).parent / "pid"
    proc = subprocess.Popen([*AUTOFIX, "hang.py", "--report", "../r.json", "--", str(pid_file)],
                            cwd=workdir(repo), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, out + err
    report = json.loads((workdir(repo).parent / "r.json").read_text())
    jsonschema.validate(report, SCHEMA)
    assert [(r["n"], r["outcome"]) for r in report["runs"]] == [(1, "interrupted")]


@pytest.mark.parametrize("name", ["error.json"])
def test_error_report_is_valid(scratch_repo: Repo, name: str) -> None:
    repo = scratch_repo({"clean.py": TEST_SCRIPTS / "clean.py"})
    done = run_autofix(["clean.py", "--python", "/nope", "--report", f"../{name}"],
                       workdir(repo))
    assert done.returncode == 2
    jsonschema.validate(json.loads((workdir(repo).parent / name).read_text()), SCHEMA)
