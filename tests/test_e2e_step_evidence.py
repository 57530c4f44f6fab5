"""Stall verdicts from the optimizer step's evidence through the real PyTorch stack: a hand
loop at a learning rate of 0 and one that clears its gradients before the step are flagged
at their cause by step 10 (the loss rule would wait for step 30 to 120); a healthy run of
the same loop is clean, and the same loop on a checkpoint at 1e-3 is reported as moving
it too fast. One tiny BERT, four short runs under the real probe."""

from __future__ import annotations

import sys

import pytest

from autofix.categories.catalogue.symptoms import fast_on_pretrained
from autofix.loop.verdicts import judge
from autofix.run.child.evidence import RATIO_TRIAL
from autofix.run.runner import RunSpec, run_script
from autofix.settings import Settings
from autofix.types import Diagnosis, Healthy, RunResult

from .conftest import TEST_SCRIPTS

pytestmark = pytest.mark.e2e
SCRIPT = TEST_SCRIPTS / "step_evidence" / "loop.py"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunResult]:
    folder = tmp_path_factory.mktemp("step-evidence")
    script = folder / "loop.py"
    script.write_text(SCRIPT.read_text())
    out = {}
    for mode in ("lr0", "zero-grad", "healthy", "pretrained"):
        settings = Settings(python=sys.executable, cwd=folder, args=(mode,), timeout=300,
                            max_steps=24, env={"OMP_NUM_THREADS": "1"})
        out[mode] = run_script(RunSpec(script, settings), script.read_text())
    return out


def verdict(run: RunResult) -> Healthy | Diagnosis:
    return judge(run, SCRIPT)


def test_lr_zero_is_a_stall_at_step_10(runs: dict[str, RunResult]) -> None:
    run = runs["lr0"]
    assert run.probe.symptom is not None and run.probe.symptom.step == 10
    assert len(run.probe.steps) == 10  # training stopped at the verdict
    found = verdict(run)
    assert isinstance(found, Diagnosis) and found.category == "stalled-loss"
    assert "learning rate is 0 at every one of optimizer steps 1-10" in found.evidence
    assert "set a learning rate above 0" in found.hint
    assert run.probe.facts["step_evidence"]["cause"] == "lr-zero"


def test_gradients_cleared_before_the_step(runs: dict[str, RunResult]) -> None:
    run = runs["zero-grad"]
    found = verdict(run)
    assert isinstance(found, Diagnosis) and found.category == "zero-grad-before-step"
    assert run.probe.symptom is not None and run.probe.symptom.step == 10
    assert "missing (None) at every one of optimizer steps 1-10" in found.evidence


def test_a_healthy_run_is_clean(runs: dict[str, RunResult]) -> None:
    run = runs["healthy"]
    assert run.probe.symptom is None and len(run.probe.steps) == 24
    assert isinstance(verdict(run), Healthy)
    evidence = run.probe.facts["step_evidence"]
    assert evidence["steps"] == 24 and evidence["unchanged"] == 0 and evidence["no_grads"] == 0
    assert evidence.get("cause") is None and evidence["pretrained"] is False
    assert evidence["fast"] is False  # trained from scratch: 1e-3 is no fault
    assert fast_on_pretrained(run) is None


def test_a_checkpoint_moved_at_1e3_gets_the_lr_trial_whatever_its_loss(
        runs: dict[str, RunResult]) -> None:
    """The same loop on a checkpoint: no stall verdict in 24 steps, but the summary says
    the updates are fast (an update ratio of RATIO_TRIAL or more), so the parent proposes
    the lower rate as a trial."""
    run = runs["pretrained"]
    assert run.probe.symptom is None and len(run.probe.steps) == 24
    evidence = run.probe.facts["step_evidence"]
    assert evidence["pretrained"] is True and evidence["adam"] is True
    assert evidence["fast"] is True and evidence["ratio"] >= RATIO_TRIAL
    assert isinstance(verdict(run), Healthy)
    trial = fast_on_pretrained(run)
    assert trial is not None and trial.category == "lr-too-high"
    assert trial.evidence.startswith("no stall, but AdamW (learning rate 0.001)")
