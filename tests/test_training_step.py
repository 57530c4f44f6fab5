"""The invariants of a hand loop's training step as units: the lr schedule judged against
the loop that steps it (``run/child/schedules.py``, on real torch and transformers
schedulers built in this process, nothing trained), the findings and the proof a fix owes
(``loop/verdicts.py``), the stall's root cause from the schedule facts, and what a run
covered in the reports' words."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
import torch
from transformers import get_linear_schedule_with_warmup

from autofix.categories import get_category
from autofix.categories.catalogue.evidence import misstepped_schedule, schedule_evidence
from autofix.categories.proofs import invariant_failure as category_invariant_failure
from autofix.categories.proofs import metric_regression
from autofix.loop.diagnosis import diagnose_symptom
from autofix.loop.verdicts import findings_of, run_findings
from autofix.reports.formats import covered_text
from autofix.run.child import plan, schedules
from autofix.types import (
    Phase,
    ProbeReport,
    RunOutcome,
    RunRecord,
    RunResult,
    StepRecord,
    SymptomReport,
)

SCHEDULERS = torch.optim.lr_scheduler


def optimizer() -> torch.optim.Optimizer:
    return torch.optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.1)


def made(kind: str) -> torch.optim.lr_scheduler.LRScheduler:
    """A scheduler of each kind :func:`schedules.multiplier` knows, on a fresh optimizer."""
    opt = optimizer()
    return {
        "StepLR": lambda: SCHEDULERS.StepLR(opt, step_size=3, gamma=0.5),
        "MultiStepLR": lambda: SCHEDULERS.MultiStepLR(opt, milestones=[2, 5, 5], gamma=0.3),
        "ExponentialLR": lambda: SCHEDULERS.ExponentialLR(opt, gamma=0.9),
        "CosineAnnealingLR": lambda: SCHEDULERS.CosineAnnealingLR(opt, T_max=7, eta_min=0.01),
        "LinearLR": lambda: SCHEDULERS.LinearLR(opt, start_factor=0.2, total_iters=4),
        "PolynomialLR": lambda: SCHEDULERS.PolynomialLR(opt, total_iters=6, power=2.0),
        "ConstantLR": lambda: SCHEDULERS.ConstantLR(opt, factor=0.5, total_iters=3),
        "LambdaLR": lambda: SCHEDULERS.LambdaLR(opt, lambda n: 0.8 ** n),
    }[kind]()


@pytest.mark.parametrize("kind", ["StepLR", "MultiStepLR", "ExponentialLR",
                                  "CosineAnnealingLR", "LinearLR", "PolynomialLR",
                                  "ConstantLR", "LambdaLR"])
def test_the_closed_forms_match_the_rate_torch_steps_to(kind: str) -> None:
    """The multiplier after n calls is the rate torch's own scheduler reaches after n
    ``step()`` calls, divided by the base rate, for n = 0..11."""
    scheduler = made(kind)
    for n in range(12):
        real = scheduler.optimizer.param_groups[0]["lr"] / 0.1
        assert schedules.multiplier(scheduler, n) == pytest.approx(real, rel=1e-6, abs=1e-9), n
        scheduler.optimizer.step()
        scheduler.step()


def test_steplr_for_epochs_stepped_per_batch_is_judged_sized_in_epochs() -> None:
    """The field case: StepLR(step_size=1, gamma=0.1), 16 batches x 2 epochs, stepped per
    batch: 1/100 of the peak at call 2 (0.1 ** 2 = 0.01 is not under it; 3 is), within the
    first epoch; stepped per epoch it is 0.1 in the second epoch."""
    scheduler = SCHEDULERS.StepLR(optimizer(), step_size=1, gamma=0.1)
    verdict = schedules.judge(scheduler, "batch", per_epoch=16, epochs=2)
    assert verdict["sized"] == "epochs"
    assert verdict["collapse_step"] == 3 and verdict["per_epoch_collapse"] is None
    assert schedules.judge(scheduler, "epoch", per_epoch=16, epochs=2)["sized"] == ""


@pytest.mark.parametrize(("build", "how", "sized"), [
    # counted in epochs, stepped per batch: the rate collapses within the first epoch
    (lambda o: SCHEDULERS.CosineAnnealingLR(o, T_max=3), "batch", "epochs"),
    (lambda o: SCHEDULERS.MultiStepLR(o, milestones=[30, 60, 80], gamma=0.1), "batch",
     "epochs"),
    (lambda o: SCHEDULERS.ExponentialLR(o, gamma=0.9), "batch", "epochs"),
    (lambda o: SCHEDULERS.LambdaLR(o, lambda e: 0.1 ** e), "batch", "epochs"),
    # per-batch schedules: left alone
    (lambda o: SCHEDULERS.CosineAnnealingLR(o, T_max=300), "batch", ""),
    (lambda o: SCHEDULERS.ExponentialLR(o, gamma=0.9999), "batch", ""),
    (lambda o: SCHEDULERS.LambdaLR(o, lambda s: 1 - s / 300), "batch", ""),
    (lambda o: SCHEDULERS.OneCycleLR(o, max_lr=0.1, total_steps=300), "batch", ""),
    (lambda o: get_linear_schedule_with_warmup(o, 10, 300), "batch", ""),
    (lambda o: get_linear_schedule_with_warmup(o, 0, 100), "batch", ""),  # ends too early
    # sized in steps, stepped per epoch: its warmup's 0 for the whole first epoch
    (lambda o: get_linear_schedule_with_warmup(o, 10, 300), "epoch", "steps"),
    (lambda o: get_linear_schedule_with_warmup(o, 10, 300), "", "steps"),
    # per-epoch schedules stepped per epoch: right
    (lambda o: SCHEDULERS.StepLR(o, step_size=1, gamma=0.5), "epoch", ""),
    (lambda o: SCHEDULERS.CosineAnnealingLR(o, T_max=3), "epoch", ""),
])
def test_schedules_are_judged_from_their_parameters_against_the_loop(
        build: object, how: str, sized: str) -> None:
    """A loop of 100 optimizer steps per epoch x 3 epochs (300 steps)."""
    scheduler = build(optimizer())  # type: ignore[operator]
    assert schedules.judge(scheduler, how, per_epoch=100, epochs=3)["sized"] == sized


def test_an_unknown_loop_shape_or_class_is_not_judged() -> None:
    scheduler = SCHEDULERS.StepLR(optimizer(), step_size=1, gamma=0.1)
    assert schedules.judge(scheduler, "batch", per_epoch=0, epochs=2)["sized"] == ""
    plateau = SCHEDULERS.ReduceLROnPlateau(optimizer())
    assert schedules.multiplier(plateau, 3) is None
    assert schedules.judge(plateau, "batch", per_epoch=16, epochs=2)["sized"] == ""


def test_a_scheduler_a_library_steps_is_not_judged(monkeypatch: pytest.MonkeyPatch) -> None:
    """A scheduler stepped by a library after its constructor (a ``Trainer``, a
    ``SequentialLR`` stepping its children) is not the script's loop to judge."""
    scheduler = SCHEDULERS.StepLR(optimizer(), step_size=1, gamma=0.1)
    entry = {"scheduler": scheduler, "calls": 8, "at": list(range(1, 9)), "site": None,
             "library": 1}
    monkeypatch.setattr(schedules.Schedules, "seen", {id(scheduler): entry})
    monkeypatch.setattr(schedules.Schedules, "per_epoch", 16)
    monkeypatch.setattr(schedules.Schedules, "epochs", 2)
    assert [e["sized"] for e in schedules.facts(8)] == ["epochs"]
    entry["library"] = 9
    assert [e["sized"] for e in schedules.facts(8)] == [""]


@pytest.mark.parametrize(("at", "steps", "how"), [
    ([1, 2, 3, 4, 5], 5, "batch"),  # after every optimizer step
    ([4, 8, 12], 12, "epoch"),  # once per epoch of 4 steps
    ([60, 60, 60], 60, "epoch"),  # the epochs the step budget left empty
    ([], 10, ""),  # never called (a stall before the first epoch ended)
    ([1, 2, 6, 10], 10, ""),  # a mix
])
def test_how_the_script_stepped_it(at: list[int], steps: int, how: str) -> None:
    assert schedules.stepped({"at": at}, steps) == how


# --- the parent -------------------------------------------------------------------------

SCHEDULE = {"class": "StepLR", "params": {"step_size": 1, "gamma": 0.1}, "calls": 18,
            "stepped": "batch", "site": {"file": "t5.py", "line": 45, "function": "main"},
            "per_epoch": 16, "epochs": 2, "optimizer_steps": 19, "sized": "epochs",
            "collapse_step": 3, "per_epoch_collapse": None, "first_epoch": 1.0, "peak": 1.0}


def run(facts: dict[str, object] | None = None, lrs: list[float] | None = None,
        phases: list[Phase] | None = None, symptom: SymptomReport | None = None,
        evaluations: list[tuple[int, dict[str, float]]] | None = None) -> RunResult:
    rates = lrs or [1e-4] * 20
    probe = ProbeReport(steps=[StepRecord(i + 1, 1.0, lr) for i, lr in enumerate(rates)],
                        facts=dict(facts or {}), phases=list(phases or []), symptom=symptom,
                        evaluations=list(evaluations or []))
    return RunResult(RunOutcome.OK, 0, 1.0, "", 0, probe)


def test_a_schedule_stepped_at_the_wrong_level_is_a_finding_in_the_runs_numbers() -> None:
    found = findings_of(run({"schedule": [SCHEDULE]}))
    assert [f.kind for f in found] == ["scheduler-stepped-per-batch"]
    assert found[0].evidence == schedule_evidence(SCHEDULE)
    assert "StepLR(step_size=1, gamma=0.1) is stepped after every optimizer step at t5.py:45" \
        in found[0].evidence and "at call 3, within the first epoch" in found[0].evidence
    assert findings_of(run({"schedule": [{**SCHEDULE, "sized": ""}]})) == []
    steps = {**SCHEDULE, "sized": "steps", "stepped": "epoch", "first_epoch": 0.0}
    assert [f.kind for f in run_findings(run({"schedule": [steps]}))] == \
        ["scheduler-stepped-per-epoch"]


def test_a_stall_at_lr_0_names_the_schedule_as_its_root_cause() -> None:
    stalled = run({"schedule": [SCHEDULE], "step_evidence": {"cause": "lr-zero"}},
                  symptom=SymptomReport("stalled-loss", 19, "stalled at step 19: the learning "
                                                            "rate is 0"))
    diagnosis = diagnose_symptom(stalled)
    assert diagnosis is not None and diagnosis.category == "scheduler-stepped-per-batch"
    assert diagnosis.via == "stalled-loss"
    assert misstepped_schedule(stalled.probe, "epochs") == SCHEDULE


def invariant_failure(before: RunResult, after: RunResult, category: str) -> str:
    """Why ``after`` does not prove a fix of ``category`` (its ``Proof``)."""
    return category_invariant_failure(get_category(category), before, after)


def test_a_stall_the_step_evidence_explains_gets_no_lower_learning_rate_beside() -> None:
    """At 3e-3 (a head trained on features) a stall whose cause the run's evidence names
    (the schedule, or gradients cleared before the step) is that cause alone: lowering the
    rate as well would slow the fixed script below its own pace."""
    stalled = SymptomReport("stalled-loss", 42, "loss stalled near chance")
    for facts, cause in (({"schedule": [SCHEDULE]}, "scheduler-stepped-per-batch"),
                         ({"step_evidence": {"cause": "zero-grad-before-step"}},
                          "zero-grad-before-step")):
        diagnosis = diagnose_symptom(run(facts, lrs=[3e-3] * 42, symptom=stalled))
        assert diagnosis is not None and diagnosis.causes == (cause,)
    plain = diagnose_symptom(run({}, lrs=[3e-3] * 42, symptom=stalled))
    assert plain is not None and plain.causes == ("lr-too-high",)


def test_a_schedule_fix_owes_the_invariant_and_no_worse_evaluation() -> None:
    before = run({"schedule": [SCHEDULE]})
    fixed = {**SCHEDULE, "sized": "", "stepped": "epoch"}
    assert invariant_failure(before, run({"schedule": [fixed]}),
                             "scheduler-stepped-per-batch") == ""
    assert "still found" in invariant_failure(before, run({"schedule": [SCHEDULE]}),
                                              "scheduler-stepped-per-batch")
    zero = run({"schedule": [fixed]}, lrs=[1e-4] * 5 + [0.0] * 5)
    assert invariant_failure(before, zero, "scheduler-stepped-per-batch") == \
        "the learning rate is 0 from step 6, before training ends"
    last_zero = run({"schedule": [fixed]}, lrs=[1e-4] * 9 + [0.0])  # the last step: fine
    assert invariant_failure(before, last_zero, "scheduler-stepped-per-batch") == ""
    warmup = run({"schedule": [fixed]}, lrs=[0.0, 0.0] + [1e-4] * 8)  # a warmup from 0
    assert invariant_failure(before, warmup, "scheduler-stepped-per-batch") == ""
    assert invariant_failure(before, last_zero, "scheduler-stepped-per-batch") == ""
    assert invariant_failure(before, run(), "stalled-loss") == ""  # not a silent fault's fix


def test_the_scripts_own_evaluation_must_not_get_worse() -> None:
    def held_out(accuracy: float, loss: float) -> RunResult:
        return run(phases=[Phase("evaluate", 32, "forwards", {
            "held_out_accuracy": accuracy, "held_out_loss": loss, "held_out_rows": 60.0})])

    assert metric_regression(held_out(0.90, 0.30), held_out(0.87, 0.32)) == ""  # noise
    assert metric_regression(held_out(0.90, 0.30), held_out(0.80, 0.30)) == \
        "held_out_accuracy fell from 0.9 to 0.8"
    assert metric_regression(held_out(0.90, 0.30), held_out(0.90, 0.40)) == \
        "held_out_loss rose from 0.3 to 0.4"
    assert metric_regression(run(), held_out(0.5, 1.0)) == ""  # nothing to compare with
    trainer = run(evaluations=[(60, {"eval_accuracy": 0.9, "eval_runtime": 1.0})])
    worse = run(evaluations=[(60, {"eval_accuracy": 0.7, "eval_runtime": 9.0})])
    assert metric_regression(trainer, worse) == "eval_accuracy fell from 0.9 to 0.7"
    failure = invariant_failure(trainer, worse, "eval-without-eval-mode")
    assert failure == "the script's own evaluation is worse after it: eval_accuracy fell " \
                      "from 0.9 to 0.7"


def test_an_evaluation_in_training_mode_is_found_from_its_call_sites() -> None:
    site = {"file": "train.py", "line": 20, "function": "<module>", "model": "Sequential",
            "layer": "Dropout", "calls": 4, "backpropagated": 0, "no_grad": False,
            "after_step": 30}

    def found(*sites: dict[str, object]) -> list[str]:
        return [f.evidence for f in run_findings(run({"train_mode_evals": list(sites),
                                                      "no_grad_train_calls": 0}))
                if f.kind == "eval-without-eval-mode"]

    evidence = found(site)
    assert len(evidence) == 1 and "at train.py:20 (Sequential with Dropout, with gradients " \
        "on, its outputs never backpropagated): 4 forwards" in evidence[0]
    assert found() == []
    # one look at the untrained model's outputs before the loop is no evaluation ...
    assert found({**site, "after_step": 0, "calls": 1}) == []
    # ... but an evaluation under no_grad before training is one
    assert len(found({**site, "after_step": 0, "no_grad": True})) == 1


def test_what_a_run_covered_in_words() -> None:
    record = RunRecord(1, "ok", "", "", 1.0, steps=[(i, 1.0) for i in range(1, 33)],
                       total_steps=32, phases=[
                           Phase("evaluate", 16, "BertForSequenceClassification forwards"),
                           Phase("evaluate", 32, "BertForSequenceClassification forwards",
                                 {"held_out_loss": 0.24, "held_out_accuracy": 1.0,
                                  "held_out_rows": 60.0}),
                           Phase("save", 32, "torch.save"), Phase("reload", 32, "torch.load")])
    assert covered_text(record) == (
        "32 of 32 training steps; 2 evaluations (steps 16, 32; the last after the final step: "
        "held_out_loss 0.24, held_out_accuracy 1); saved (torch.save); reloaded (torch.load)")
    record.phases = record.phases[:1]  # only the evaluation at step 16 of 32
    assert covered_text(record) == "32 of 32 training steps; 1 evaluation (step 16)"
    cut = RunRecord(1, "budget", "", "", 1.0, steps=[(i, 1.0) for i in range(1, 61)],
                    total_steps=150)
    assert covered_text(cut) == "60 of 150 training steps; no evaluation"
    assert covered_text(RunRecord(1, "failed", "x", "", 1.0)) == ""
    assert not math.isnan(len(covered_text(cut)))


def measured(tmp_path: Path, source: str, loader: object) -> tuple[object, object]:
    """``(hand_loop_shape, hand_loop_total)`` measured where ``source``'s ``run()`` calls
    ``here()`` (the step's frame, a user file), while its loops run."""
    path = tmp_path / f"user{len(list(tmp_path.iterdir()))}.py"
    path.write_text(source)

    def here() -> tuple[object, object]:
        frame = sys._getframe(1)
        return plan.hand_loop_shape(loader, frame), plan.hand_loop_total(loader, frame)

    scope: dict[str, object] = {"here": here}
    exec(compile(source, str(path), "exec"), scope)
    return scope["run"]()  # type: ignore[operator,no-any-return]


def test_the_loops_shape_in_steps_per_epoch_and_epochs(tmp_path: Path) -> None:
    """A class's batch loop written as a comprehension inside an epoch loop, and a loop over
    batch offsets (``range(0, n, 32)``): the steps per epoch and the epochs a schedule is
    judged against."""
    assert measured(tmp_path, "class Engine:\n    def step(self, batch):\n"
                              "        return here()\n\n"
                              "    def fit(self, loader, epochs):\n"
                              "        for epoch in range(epochs):\n"
                              "            shapes = [self.step(b) for b in loader]\n"
                              "        return shapes[0]\n\n\n"
                              "def run():\n    return Engine().fit([1, 2], 3)\n",
                    range(16)) == ((16, 3), 48)
    assert measured(tmp_path, "def run():\n    for epoch in range(2):\n"
                              "        for i in range(0, 640, 32):\n"
                              "            return here()\n",
                    None) == ((20, 2), 0)  # a range of offsets: no loader to count
