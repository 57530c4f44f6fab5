"""A hand loop's two faults, through the real CLI and stack: a DataLoader over the raw split
(raw-dataset, its DataLoader face) and a macro F1 on the logits, in the evaluation after
training. The first run fails at the loader; the metric is read from the source and fixed
in the same group, so one verifying run proves both (2 runs, not 3), and the branch's
script then computes its F1.

Cost: one session of two runs on a tiny BERT, ``--max-steps 5``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import git
import pytest

from .conftest import SAMPLES, TEST_SCRIPTS, make_repo, run_autofix

pytestmark = pytest.mark.e2e

SCRIPT = "raw_loader_f1.py"


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory
            ) -> tuple[git.Repo, subprocess.CompletedProcess[str], dict]:
    tmp = tmp_path_factory.mktemp("hand-eval")
    repo = make_repo(tmp / "repo", {SCRIPT: TEST_SCRIPTS / "hand_eval" / SCRIPT,
                                    "data": SAMPLES / "data"})
    out = run_autofix([SCRIPT, "--branch", "fixes", "--max-steps", "5", "--report",
                       str(tmp / "r.json")], cwd=Path(str(repo.working_tree_dir)),
                      env={"OMP_NUM_THREADS": "1"})
    return repo, out, json.loads((tmp / "r.json").read_text())


def test_both_faults_fixed_in_one_group(
        session: tuple[git.Repo, subprocess.CompletedProcess[str], dict]) -> None:
    repo, out, report = session
    assert out.returncode == 0, out.stdout + out.stderr
    assert report["status"] == "fixed"
    assert [r["category"] for r in report["runs"]] == ["raw-dataset", ""]
    assert [(f["category"], f["recipe"], f["run"]) for f in report["fixes"]] == [
        ("raw-dataset", "raw-dataset", 1), ("metric-on-logits", "metric-on-logits-call", 1)]
    source = repo.git.show(f"fixes:{SCRIPT}")
    assert 'DataLoader(enc["train"], batch_size=16' in source
    assert "np.argmax(torch.cat(scores).numpy(), axis=-1)" in source
    # the user's file is left as it was: the fixes live on the branch only
    mine = (Path(str(repo.working_tree_dir)) / SCRIPT).read_text()
    assert 'DataLoader(ds["train"]' in mine and "np.argmax" not in mine


def test_the_branch_script_computes_its_metric(
        session: tuple[git.Repo, subprocess.CompletedProcess[str], dict]) -> None:
    """The verifying run ran the evaluation to its end: the script wrote its F1."""
    repo, _, report = session
    last = report["runs"][-1]
    assert last["outcome"] in ("ok", "budget") and len(last["steps"]) == 5
    f1 = float((Path(str(repo.working_tree_dir)) / "f1.txt").read_text())
    assert 0.0 <= f1 <= 1.0
