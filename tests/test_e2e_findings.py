"""Healthy-run findings through the real stack, cheap enough for the default tier (issue 8).

Tiny BERT models built from a config (no checkpoint, a few ms a step) train in a
hand-written loop under the real probe and the real ``autofix`` CLI in a throwaway repo:

* a correct script that learns slowly ends exit 0, status ``clean``, no branch, with the
  finding ``learning-slowly`` and nothing else (no stall, no "trains wrongly" finding);
* a script whose labels were shuffled apart from their inputs (80 % class 0) trains with
  no error and no stall, but predicts one class for every row: exit 1, status
  ``findings`` (a fault finding is never ``clean``), the finding ``constant-prediction``;
* a batch norm CNN evaluated in training mode gets the ``eval-without-eval-mode`` finding
  and its ``add-eval-mode`` fix (status ``fixed``);
* source findings of plain PyTorch scripts: a shuffling evaluation loader fixed with
  ``shuffle=False`` (status ``fixed``), statistics of all rows before a split left as
  advice (status ``findings``).

The same verdicts on the real MiniLM checkpoint (at the default budget) are measured by
``benchmarks/bench_stall_grid.py`` and ``tests/test_e2e_symptoms.py`` (slow tier).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import git
import pytest

from .conftest import SAMPLES, TEST_SCRIPTS, run_autofix, snapshot, trailers

Repo = Callable[[dict[str, str | Path]], git.Repo]
PLAIN = SAMPLES / "plain"
pytestmark = [pytest.mark.e2e]


def clean_run(repo: git.Repo, steps: int, status: str = "clean"
              ) -> tuple[dict[str, object], str]:
    """autofix on ``train.py`` at ``--max-steps steps``; asserts the outcome ``status``
    (exit 0 for ``clean``, 1 for ``findings``), no branch, the tree untouched, and
    returns report and output."""
    root = Path(str(repo.working_tree_dir))
    before = snapshot(repo)
    done = run_autofix(["train.py", "--max-steps", str(steps), "--branch", "fixes",
                        "--report", "../report.json"], root, timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode == (0 if status == "clean" else 1), out
    report = json.loads((root.parent / "report.json").read_text())
    assert report["status"] == status and report["fixes"] == [] and report["branch"] is None
    assert "fixes" not in repo.heads
    assert snapshot(repo) == before
    return report, out


def test_correct_slow_script_is_clean_with_the_learning_slowly_finding(
        scratch_repo: Repo) -> None:
    repo = scratch_repo({"train.py": TEST_SCRIPTS / "tiny_slow_learner.py"})
    # the stall rule's minimum budget; the unclear verdict extends it to 60
    report, out = clean_run(repo, 30)
    runs = report["runs"]
    assert isinstance(runs, list) and len(runs) == 1 and runs[0]["category"] == ""
    assert "budget extended to 60 steps" in runs[0]["evidence"]
    findings = report["findings"]
    assert isinstance(findings, list)
    assert [f["kind"] for f in findings] == ["learning-slowly"], findings
    evidence = findings[0]["evidence"]
    assert "not yet clearly under chance (0.85 x ln 3 = 0.934) after 60 steps" in evidence
    assert "no evidence of a stall" in evidence
    assert "finding learning-slowly: learning slowly: loss 1.098 over steps 1-10" in out


def test_labels_shuffled_apart_from_inputs_give_constant_prediction(
        scratch_repo: Repo) -> None:
    repo = scratch_repo({"train.py": TEST_SCRIPTS / "tiny_labels_shuffled.py"})
    report, out = clean_run(repo, 60, "findings")  # the default budget, the minimum
    runs = report["runs"]
    assert isinstance(runs, list) and len(runs) == 1 and runs[0]["category"] == ""
    assert "budget extended" not in runs[0]["evidence"]  # clearly under ln 2: no extension
    findings = report["findings"]
    assert isinstance(findings, list)
    assert [f["kind"] for f in findings] == ["constant-prediction"], findings
    evidence = findings[0]["evidence"]
    assert "predicts class 0 for every one of the last 160 training rows" in evidence
    assert "aligned with the inputs" in evidence
    assert "finding constant-prediction" in out
    assert "trains wrongly: constant-prediction" in out


def test_a_declined_trial_gives_way_to_the_findings_fix(scratch_repo: Repo) -> None:
    """The optimizer is built in the call to ``train()`` (its lr inline): the lr trial
    finds no rate of its own to lower, so the ``zero-grad-missing`` finding's recipe is
    tried next and proves itself (the loss falls, the finding is gone)."""
    repo = scratch_repo({"train.py": SAMPLES / "plain" / "faults" / "zerograd_cnn_loader.py"})
    root = Path(str(repo.working_tree_dir))
    done = run_autofix(["train.py", "--branch", "fixes", "--report", "../report.json"], root,
                       timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((root.parent / "report.json").read_text())
    assert report["status"] == "fixed"
    assert [(f["category"], f["recipe"], f["line"]) for f in report["fixes"]] == \
        [("zero-grad-missing", "add-zero-grad", 12)]
    assert report["findings"] == []
    diff = repo.git.diff("HEAD", "fixes")
    assert [ln.strip() for ln in diff.splitlines() if ln.startswith("+") and
            not ln.startswith("+++")] == ["+            optimizer.zero_grad()"], diff


def test_evaluation_in_training_mode_is_fixed_with_model_eval(scratch_repo: Repo) -> None:
    """A batch norm CNN evaluated every epoch under ``torch.inference_mode()`` in training
    mode (``sample_scripts/plain``): the probe's finding ``eval-without-eval-mode`` is fixed
    by one ``add-eval-mode`` commit that the next run no longer shows the finding after."""
    repo = scratch_repo({"train.py": SAMPLES / "plain" / "faults"
                         / "evalmode_batchnorm_inference.py"})
    root = Path(str(repo.working_tree_dir))
    done = run_autofix(["train.py", "--branch", "fixes", "--report", "../report.json"], root,
                       timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    report = json.loads((root.parent / "report.json").read_text())
    assert report["status"] == "fixed", out
    assert trailers(repo, "fixes", "main") == ["eval-without-eval-mode"]
    diff = repo.git.diff("main", "fixes")
    added = [ln[1:].strip() for ln in diff.splitlines()
             if ln.startswith("+") and not ln.startswith("+++")]
    assert added == ["model.eval()", "model.train()"], diff
    assert report["findings"] == [], report["findings"]


def test_a_shuffled_evaluation_loader_is_fixed_with_shuffle_false(scratch_repo: Repo) -> None:
    """The predictions of a predict() helper over a shuffling test loader, scored against
    the numpy labels in stored order: a source finding, fixed by eval-loader-no-shuffle and
    kept because the next run no longer shows it."""
    repo = scratch_repo({"train.py": PLAIN / "faults" / "shuffled_eval_numpy_labels.py"})
    root = Path(str(repo.working_tree_dir))
    done = run_autofix(["train.py", "--branch", "fixes", "--report", "../report.json"], root)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    report = json.loads((root.parent / "report.json").read_text())
    assert report["status"] == "fixed", out
    assert [f["recipe"] for f in report["fixes"]] == ["eval-loader-no-shuffle"]
    assert trailers(repo, "fixes", "main") == ["eval-loader-shuffled"]
    assert report["findings"] == []
    diff = repo.git.diff("main", "fixes")
    assert "-    test_loader = DataLoader(TensorDataset(torch.from_numpy(X_test)), " \
           "batch_size=35, shuffle=True)" in diff
    assert "+                             shuffle=False)" in diff


def test_statistics_before_the_split_are_fitted_on_the_train_split(scratch_repo: Repo
                                                                    ) -> None:
    """A StandardScaler fitted on all rows before train_test_split: the finding names the
    script's own lines and ``fit-on-train-split`` fits the scaler on the train split after
    it, transforming the test split with it; the next run shows no finding."""
    repo = scratch_repo({"train.py": PLAIN / "faults" / "stats_scaler_before_split.py"})
    root = Path(str(repo.working_tree_dir))
    done = run_autofix(["train.py", "--max-steps", "60", "--branch", "fixes", "--report",
                        "../report.json"], root, timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "line 11: `X = StandardScaler().fit_transform(X)`" in out
    report = json.loads((root.parent / "report.json").read_text())
    assert [(f["category"], f["recipe"]) for f in report["fixes"]] == \
        [("stats-before-split", "fit-on-train-split")]
    assert report["findings"] == []
    fixed = repo.git.show("fixes:train.py")
    assert "X_train = scaler.fit_transform(X_train)" in fixed
    assert "X_test = scaler.transform(X_test)" in fixed
    assert "X = StandardScaler().fit_transform(X)" not in fixed
