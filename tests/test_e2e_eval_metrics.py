"""The probe records the script's evaluation (issue 27, point 5): a tiny BERT Trainer
that evaluates after training; the report shows the verifying run's eval metrics (the
probe's own early evaluation before training is not among them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import TEST_SCRIPTS, make_repo, run_autofix

pytestmark = pytest.mark.e2e


def test_the_verifying_runs_eval_metrics_are_in_the_report(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"train.py": TEST_SCRIPTS / "tiny_trainer_eval.py"})
    root = Path(str(repo.working_tree_dir))
    done = run_autofix(["train.py", "--report", "../r.json"], root,
                       env={"OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["status"] == "clean" and report["trained"] is True
    last = report["runs"][-1]
    assert last["eval_step"] == 60  # trainer.evaluate() after the budget stopped training
    assert 0.0 < last["metrics"]["eval_loss"] < 1.2
    assert 0.0 <= last["metrics"]["eval_accuracy"] <= 1.0
    assert "evaluation (run 1, step 60): eval_loss " in done.stdout
    assert report["command"] == "autofix train.py --report ../r.json"
    assert report["seconds"] >= last["seconds"]
