"""A diverging loss (issue 26, item 1): the child's numeric evidence, the causes behind
``nan-loss`` read from it, the order they are tried in, and the proof a fix owes (a loss
finite and falling). No process, no training."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn
from torch.optim.optimizer import register_optimizer_step_pre_hook

from autofix.categories import get_category
from autofix.categories.catalogue.divergence import (
    GROWING_TRIAL,
    divergence_evidence,
    growing_loss,
)
from autofix.categories.proofs import finite_and_falling, learning_failure
from autofix.loop.diagnosis import diagnose_symptom
from autofix.loop.fixgroups import FixGroup
from autofix.loop.verdicts import judge
from autofix.run.child import numeric
from autofix.types import (
    Diagnosis,
    FixRecord,
    Healthy,
    ProbeReport,
    RunOutcome,
    RunResult,
    StepRecord,
    SymptomReport,
)


def run_of(losses: list[float], lr: float | None = 0.01, **facts: object) -> RunResult:
    steps = [StepRecord(i + 1, x, lr) for i, x in enumerate(losses)]
    symptom = None
    bad = next((i for i, x in enumerate(losses) if not math.isfinite(x)), None)
    if bad is not None:
        symptom = SymptomReport("nan-loss", bad + 1, f"loss is {losses[bad]} at step {bad + 1}, "
                                "the first non-finite step", None, None, ())
    return RunResult(RunOutcome.OK, 0, 1.0, "", 0,
                     ProbeReport(steps=steps, symptom=symptom, facts=dict(facts)))


GROWING = [5156.8, 2.2e7, 9.6e10, 4.1e14, 1.8e18, 7.7e21, 3.3e25, 1.4e29, 6.1e32, 2.6e36,
           math.inf]
WIDE_INPUT = {"name": "X", "line": 33, "file": "", "kind": "tensor", "shape": [50, 1],
              "abs_max": 100.0, "column_mean": 50.0, "column_std": 29.5}


def test_unscaled_inputs_come_first_and_the_evidence_names_step_losses_and_norms() -> None:
    norms = [1.2e4, 5.0e6, 2.2e9, "inf"]
    run = run_of(GROWING, numeric={"inputs": [WIDE_INPUT], "grad_norms": norms})
    diag = diagnose_symptom(run)
    assert diag is not None
    assert diag.category == "unscaled-inputs" and diag.via == "nan-loss"
    assert diag.causes == ("unscaled-inputs", "exploding-gradients", "diverging-lr")
    assert diag.fact("lr") == "0.01"
    assert diag.evidence.startswith("loss is inf at step 11, the first non-finite step")
    assert "loss over steps 1-10: 5157, 2.2e+07, 9.6e+10, ..., 1.4e+29, 6.1e+32, 2.6e+36" \
        in diag.evidence
    assert "it grew" in diag.evidence
    assert "gradient norm over steps 1-4: 1.2e+04, 5e+06, 2.2e+09, inf (exploding)" \
        in diag.evidence
    assert "input X of the model call on line 33 (shape [50, 1]): values up to 100" \
        in diag.evidence


def test_the_order_follows_the_evidence() -> None:
    """Standardised inputs: no scale cause; a steady gradient norm: no clipping; the
    learning rate is what is left."""
    small = {**WIDE_INPUT, "abs_max": 3.2}
    steady = run_of(GROWING, numeric={"inputs": [small], "grad_norms": [1.0, 1.3, 0.9]})
    diag = diagnose_symptom(steady)
    assert diag is not None and diag.causes == ("diverging-lr",)
    exploding = run_of(GROWING, numeric={"inputs": [small], "grad_norms": [1.0, 40.0, 900.0]})
    diag = diagnose_symptom(exploding)
    assert diag is not None and diag.causes == ("exploding-gradients", "diverging-lr")
    assert get_category("nan-loss").alternatives


def test_nan_without_any_evidence_stays_nan_loss() -> None:
    """No learning rate recorded, no numeric facts: nothing to try, the symptom is named."""
    diag = diagnose_symptom(run_of([1.0, 0.9, math.nan], lr=None))
    assert diag is not None and diag.category == "nan-loss" and diag.causes == ()


def test_a_nan_from_a_level_loss_is_no_divergence() -> None:
    """``log(0)`` or a mean over no targets: no growth, no exploding norm, no cause."""
    run = run_of([0.7, 0.69, 0.68, math.nan], numeric={"grad_norms": [1.0, 1.1, 0.9]})
    assert divergence_evidence(run.probe) == [
        "loss over steps 1-3: 0.7, 0.69, 0.68; no growth before it",
        "gradient norm over steps 1-3: 1, 1.1, 0.9"]
    diag = diagnose_symptom(run)
    assert diag is not None and diag.category == "nan-loss" and diag.causes == ()


@pytest.mark.parametrize(("losses", "falling"), [
    ([100.0 * 0.96 ** i for i in range(20)], True),  # the ML-Dev-Bench test's run
    ([1.127e5, 8.8e4, 1.03e5, 1.2e5, 1.08e5, 1.26e5, 1.08e5, 1.29e5] * 5, False),  # clipped
    ([5.0, 4.0, 3.0, math.nan, 2.0, 1.0, 0.5, 0.2], False),
    ([3.0, 2.0, 1.0], False),  # too short to tell
    ([1.0] * 30, False),
])
def test_finite_and_falling(losses: list[float], falling: bool) -> None:
    assert finite_and_falling(losses) is falling


def fix_group(diag: Diagnosis) -> FixGroup:
    record = FixRecord(recipe="clip-grad-norm", category=diag.category, commit="a" * 40,
                       summary="clip", file="train.py", line=1)
    return FixGroup(diag, run_of(GROWING), 1, [record], {}, {})


def test_a_fix_that_leaves_the_loss_finite_but_flat_is_not_kept(tmp_path: object) -> None:
    diag = Diagnosis("exploding-gradients", "loss is inf at step 7", via="nan-loss",
                     causes=("exploding-gradients", "diverging-lr"))
    flat = run_of([1.127e5, 8.8e4, 1.03e5, 1.2e5, 1.08e5, 1.26e5] * 10)
    verdict = judge(flat, tmp_path)  # type: ignore[arg-type]
    assert isinstance(verdict, Healthy)
    reason = fix_group(diag).failed_by(flat, verdict)
    assert "did not help: the loss is not finite and falling (60 steps" in reason
    falling = run_of([1.1e5 * 0.9 ** i for i in range(60)])
    assert fix_group(diag).failed_by(falling, judge(falling, tmp_path)) == ""  # type: ignore[arg-type]
    assert learning_failure(falling) != ""  # a stall fix still owes a loss under chance


def test_the_child_records_the_first_forward_inputs_and_the_gradient_norms() -> None:
    numeric.Seen.inputs, numeric.Seen.norms = [], []
    numeric.patch_modules(torch.nn.modules.module)
    model = nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    rows = torch.tensor([[1.0, 200.0], [2.0, 150.0], [3.0, 100.0]])
    handle = register_optimizer_step_pre_hook(numeric._before_step)
    try:
        for _ in range(2):
            optimizer.zero_grad()
            model(rows).sum().backward()
            optimizer.step()
    finally:
        handle.remove()
        if numeric.Seen.handle is not None:
            numeric.Seen.handle.remove()
    inputs, norms = numeric.Seen.inputs, numeric.Seen.norms
    numeric.Seen.inputs, numeric.Seen.norms = [], []
    assert len(inputs) == 1  # the hook is gone after the first forward
    fact = inputs[0]
    assert fact["name"] == "rows" and fact["shape"] == [3, 2] and fact["abs_max"] == 200.0
    assert fact["column_std"] == pytest.approx(50.0)
    assert fact["file"] == __file__ and fact["module"] == "Linear"
    assert len(norms) == 2 and float(norms[0]) ** 0.5 == pytest.approx(
        math.sqrt(6.0 ** 2 + 450.0 ** 2 + 3.0 ** 2))


def test_a_finite_loss_that_grows_gets_the_divided_rate_as_a_trial() -> None:
    growing = run_of([5156.8 * 4.2 ** i for i in range(9)])  # ML-Dev-Bench's, stopped early
    trial = growing_loss(growing)
    assert trial is not None and trial.category == "diverging-lr"
    assert trial.via == GROWING_TRIAL and trial.fact("lr") == "0.01"
    assert trial.evidence.startswith("the loss grew without turning non-finite: mean ")
    assert trial.evidence.endswith("root cause: diverging-lr")
    wide = run_of([5156.8 * 4.2 ** i for i in range(9)], numeric={"inputs": [WIDE_INPUT]})
    scaled = growing_loss(wide)  # the scale evidence comes first, as for a NaN
    assert scaled is not None and scaled.category == "unscaled-inputs"
    for healthy in ([0.69 * 0.97 ** i for i in range(60)], [1.1] * 60, [2.0, 2.5, 1.9] * 20):
        assert growing_loss(run_of(healthy)) is None
    assert growing_loss(run_of([5156.8 * 4.2 ** i for i in range(9)], lr=None)) is None
    record = FixRecord("diverging-lr", "divide-lr", "b" * 40, "train.py", 1)
    group = FixGroup(trial, growing, 1, [record], {}, {}, tentative=True)
    flat = run_of([1.0] * 30)
    assert "not finite and falling" in group.failed_by(flat, Healthy("", False))
    falling = run_of([100.0 * 0.9 ** i for i in range(30)])
    assert group.failed_by(falling, Healthy("", False)) == ""
