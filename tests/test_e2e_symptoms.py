"""Training symptoms through the real PyTorch stack on CPU: stalled loss and NaN loss."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import git
import pytest

from .conftest import SAMPLES, TEST_SCRIPTS, run_autofix, snapshot, trailers

Repo = Callable[[dict[str, str | Path]], git.Repo]
pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def repair(repo: git.Repo, script: str, *extra: str,
           timeout: float = 600) -> tuple[int, dict[str, object], str]:
    root = Path(str(repo.working_tree_dir))
    done = run_autofix([script, "--branch", "fixes", "--report", "../report.json", *extra],
                       root, timeout=timeout)
    report = json.loads((root.parent / "report.json").read_text())
    return done.returncode, report, done.stdout + done.stderr


def test_hand_written_loop_stall_is_lr_too_high(scratch_repo: Repo) -> None:
    repo = scratch_repo({"train.py": SAMPLES / "course_pt_loop_mnli.py",
                         "data": SAMPLES / "data"})
    before = snapshot(repo)
    # a flat stall is judged at the end of the extended budget (120 steps): more time
    code, report, out = repair(repo, "train.py", timeout=1500)
    assert code == 0, out
    assert snapshot(repo) == before
    runs = report["runs"]
    assert isinstance(runs, list)
    assert runs[0]["category"] == "lr-too-high"
    # Adam at 1e-3 stays flat at chance or learns and comes back: a stall, or "learning
    # slowly" at lr 1e-3, which is a trial of the same fix (both measured)
    assert "stalled near chance" in runs[0]["evidence"] \
        or "stopped falling" in runs[0]["evidence"] \
        or "update-to-weight ratio" in runs[0]["evidence"] \
        or "not clearly learning at a learning rate of 0.001" in runs[0]["evidence"]
    assert runs[-1]["outcome"] in ("ok", "budget")  # the proof run: clearly under ln 3
    assert trailers(repo, "fixes", "main") == ["lr-too-high"]
    source = (repo.commit("fixes").tree / "train.py").data_stream.read().decode()
    assert "torch.optim.Adam(model.parameters(), lr=5e-5)" in source
    message = str(repo.commit("fixes").message)
    assert ("Run 1 showed stalled-loss:" in message and "Autofix-Via: stalled-loss" in message) \
        or ("this fix is a trial" in message and "Autofix-Via: learning-slowly" in message)


def test_symptom_fix_that_does_not_help_is_dropped(scratch_repo: Repo) -> None:
    """Labels unrelated to the text cannot be learned: lowering the lr cannot end the
    stall (or make a run "learning slowly" at lr 1e-3 learn), so the lr-too-high commit
    must be dropped and the report must say so."""
    source = (SAMPLES / "course_pt_loop_mnli.py").read_text()
    marker = 'tokenized_datasets.set_format("torch")'
    assert marker in source
    source = source.replace(marker, "tokenized_datasets = tokenized_datasets.map(\n"
                            "    lambda ex, i: {\"labels\": (i * 7919) % 3}, with_indices=True\n"
                            ")\n" + marker)
    repo = scratch_repo({"train.py": source, "data": SAMPLES / "data"})
    code, report, out = repair(repo, "train.py")
    runs = report["runs"]
    assert isinstance(runs, list) and runs[0]["category"] == "lr-too-high", out
    if "not clearly learning at a learning rate of 0.001" in runs[0]["evidence"]:
        # run 1 was too noisy to call a stall ("learning slowly" at lr 1e-3): the lr fix was
        # a trial, and a trial that does not prove itself leaves the script as it was
        assert code == 0, out
        assert report["status"] == "clean"
        assert [f["kind"] for f in report["findings"]] == ["learning-slowly"]
    else:  # a stall at lr 1e-3 whose fix did not help: nothing autofix can do
        assert code == 1, out
        assert report["status"] == "gave_up"
    assert report["fixes"] == []
    reason = str(report["reason"])
    assert "did not help" in reason and "dropped" in reason
    assert "fixes" not in repo.heads


def test_real_nan_is_traced_to_its_step_and_samples(scratch_repo: Repo) -> None:
    repo = scratch_repo({"train.py": TEST_SCRIPTS / "nan_all_ignored.py",
                         "data": SAMPLES / "data"})
    code, report, out = repair(repo, "train.py")
    assert code == 1, out
    runs = report["runs"]
    assert isinstance(runs, list) and len(runs) == 1
    assert runs[0]["category"] == "nan-loss"
    evidence = runs[0]["evidence"]
    assert "loss is nan at step 3" in evidence
    assert "all 16 labels of that batch are -100" in evidence
    assert "batch sample 0: label -100" in out
    assert "fixes" not in repo.heads


def test_correct_slow_script_is_clean_with_a_learning_slowly_finding(
        scratch_repo: Repo) -> None:
    """Issue 8: a correct script at lr 2e-5, batch 8, 3 classes learns slowly; autofix must
    not call that a stall: exit 0, status clean, no branch, the finding in the report.
    ``--max-steps 30`` keeps it short (the extension then ends at step 60; measured on
    the grid, such runs stay near ln C for 60-80 steps)."""
    source = (SAMPLES / "course_pt_loop_mnli.py").read_text()
    source = source.replace("torch.optim.Adam(model.parameters())",
                            "torch.optim.AdamW(model.parameters(), lr=2e-5)")
    source = source.replace("batch_size=16", "batch_size=8")
    repo = scratch_repo({"train.py": source, "data": SAMPLES / "data"})
    code, report, out = repair(repo, "train.py", "--max-steps", "30", timeout=1500)
    assert code == 0, out
    assert report["status"] == "clean" and report["fixes"] == [] and report["branch"] is None
    assert "fixes" not in repo.heads
    runs = report["runs"]
    assert isinstance(runs, list) and len(runs) == 1 and runs[0]["category"] == ""
    findings = report["findings"]
    assert isinstance(findings, list)
    assert [f["kind"] for f in findings] == ["learning-slowly"], (runs, findings)
    assert "budget extended to 60 steps" in runs[0]["evidence"]
    assert "finding learning-slowly" in out
