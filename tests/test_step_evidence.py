"""Stall verdicts from the optimizer step's execution evidence (``run/child/evidence.py``),
the sample the probe reads (``run/child/step_probe.py``), the event that carries them and
the causes the parent names from them."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest

from autofix.categories.catalogue.evidence import evidence_advice, step_cause
from autofix.loop.diagnosis import diagnose_symptom
from autofix.run.child import evidence as ev
from autofix.run.child.step_probe import choose
from autofix.run.child.symptoms import MIN_STEPS, LossMonitor
from autofix.run.probe_events import read_probe
from autofix.types import ProbeReport, RunOutcome, RunResult, StepRecord, SymptomReport

CHANCE = math.log(4)
PRETRAINED = ev.ModelFacts(trainable=22_000_000, total=22_000_000, pretrained=True,
                           adam=True, optimizer="AdamW")


def monitor(records: list[ev.StepEvidence], model: ev.ModelFacts = PRETRAINED
            ) -> ev.EvidenceMonitor:
    out = ev.EvidenceMonitor(model=model)
    for record in records:
        out.add(record)
    return out


def steps(n: int, **fields: object) -> list[ev.StepEvidence]:
    base: dict[str, object] = {"sampled": 8, "changed": True, "grads": ev.GRADS_SOME,
                               "lr": 5e-5, "ratio": 1e-4, "in_optimizer": 100}
    base.update(fields)
    return [ev.StepEvidence(step=i, **base) for i in range(1, n + 1)]  # type: ignore[arg-type]


def losses(values: list[float], classes: int = 4) -> LossMonitor:
    out = LossMonitor(classes)
    for x in values:
        out.add(x)
    return out


def flat(n: int, level: float = CHANCE) -> LossMonitor:
    return losses([level + 0.01 * ((i % 3) - 1) for i in range(n)])


# --- the rules ---------------------------------------------------------------------------


def test_lr_zero_over_a_window_is_a_stall_at_step_10() -> None:
    records = steps(ev.WINDOW, lr=0.0, changed=False, ratio=0.0)
    verdict = monitor(records).judge(flat(ev.WINDOW))
    assert verdict is not None and verdict.cause == ev.LR_ZERO
    assert verdict.symptom.kind == "stalled-loss" and verdict.symptom.step == 10
    assert "optimizer steps 1-10" in verdict.symptom.evidence
    assert monitor(records[:-1]).judge(flat(ev.WINDOW - 1)) is None  # 9 steps: too few


def test_lr_zero_with_a_scheduler_not_stepped_names_the_scheduler() -> None:
    records = steps(ev.WINDOW, lr=0.0, changed=False, scheduler_steps=0)
    verdict = monitor(records).judge(flat(ev.WINDOW))
    assert verdict is not None and verdict.cause == ev.SCHEDULER_NOT_STEPPED
    stepped = [ev.StepEvidence(**{**r.__dict__, "scheduler_steps": r.step}) for r in records]
    assert monitor(stepped).judge(flat(ev.WINDOW)).cause == ev.LR_ZERO  # type: ignore[union-attr]


def test_a_warmup_starting_at_0_is_no_stall() -> None:
    """A linear warmup's first step is at lr 0 and the weights do not move; then they do."""
    records = steps(ev.WINDOW, lr=1e-6)
    records[0] = ev.StepEvidence(1, 8, False, ev.GRADS_SOME, 0.0, 0.0, 100)
    assert monitor(records).judge(flat(ev.WINDOW)) is None
    # weights unchanged at a learning rate above 0 (float16 resolution): no cause known
    assert monitor(steps(ev.WINDOW, changed=False)).judge(flat(ev.WINDOW)) is None


def test_gradients_cleared_between_backward_and_step() -> None:
    records = steps(ev.WINDOW, grads=ev.GRADS_NONE, changed=False, backward=True,
                    zero_grad=True)
    verdict = monitor(records).judge(flat(ev.WINDOW))
    assert verdict is not None and verdict.cause == ev.ZERO_GRAD_BEFORE_STEP
    assert "missing (None)" in verdict.symptom.evidence
    no_zero_grad = steps(ev.WINDOW, grads=ev.GRADS_ZERO, backward=True)
    verdict = monitor(no_zero_grad).judge(flat(ev.WINDOW))
    assert verdict is not None and verdict.cause == ev.NO_GRADIENTS
    some = steps(ev.WINDOW, grads=ev.GRADS_NONE, backward=True, zero_grad=True)
    some[4] = ev.StepEvidence(5, 8, True, ev.GRADS_SOME, 5e-5, 1e-3, 100, True, True)
    assert monitor(some).judge(flat(ev.WINDOW)) is None  # one step had gradients


def test_an_optimizer_over_other_parameters() -> None:
    records = steps(ev.WINDOW, in_optimizer=0, changed=False, grads=ev.GRADS_NONE)
    verdict = monitor(records).judge(flat(ev.WINDOW))
    assert verdict is not None and verdict.cause == ev.OTHER_PARAMETERS
    # the optimizer's own parameters have gradients: a student trained beside a teacher
    student = steps(ev.WINDOW, in_optimizer=0, changed=False, grads=ev.GRADS_SOME)
    assert monitor(student).judge(flat(ev.WINDOW)) is None


def test_a_language_model_keeps_the_loss_rule() -> None:
    """The ratio and frozen-base thresholds were measured on classifiers."""
    from autofix.run.child.symptoms import Chance

    records = steps(MIN_STEPS, ratio=2e-2, lr=1e-3)
    lm = LossMonitor(level=Chance(3.0, "tokens", "H", None, 1000))
    for i in range(MIN_STEPS):
        lm.add(3.0 + 0.01 * ((i % 3) - 1))
    assert monitor(records).judge(lm) is None


def test_frozen_base_at_chance_at_step_30() -> None:
    frozen = ev.ModelFacts(100_000, 22_000_000, True, False, True, "AdamW")
    records = steps(MIN_STEPS, ratio=1e-3)
    verdict = monitor(records, frozen).judge(flat(MIN_STEPS))
    assert verdict is not None and verdict.cause == ev.FROZEN_BASE
    assert verdict.symptom.step == MIN_STEPS and "0.5 %" in verdict.symptom.evidence
    assert monitor(records[:-1], frozen).judge(flat(MIN_STEPS - 1)) is None
    # a PEFT adapter (LoRA trains under 1 %) and a model built from a config: no verdict
    adapter = ev.ModelFacts(100_000, 22_000_000, True, True, True, "AdamW")
    assert monitor(records, adapter).judge(flat(MIN_STEPS)) is None
    scratch = ev.ModelFacts(100_000, 22_000_000, False, False, True, "AdamW")
    assert monitor(records, scratch).judge(flat(MIN_STEPS)) is None
    # learning: the loss clearly under chance
    assert monitor(records, frozen).judge(flat(MIN_STEPS, 0.5 * CHANCE)) is None


def test_update_ratio_far_above_fine_tuning_is_lr_too_high() -> None:
    records = steps(MIN_STEPS, ratio=2e-2, lr=1e-3)
    verdict = monitor(records).judge(flat(MIN_STEPS))
    assert verdict is not None and verdict.cause == ev.LR_TOO_HIGH
    assert "2.0e-02" in verdict.symptom.evidence and verdict.symptom.step == MIN_STEPS
    healthy = steps(MIN_STEPS, ratio=ev.RATIO_HIGH / 4)
    assert monitor(healthy).judge(flat(MIN_STEPS)) is None
    sgd = ev.ModelFacts(22_000_000, 22_000_000, True, False, False, "SGD")
    assert monitor(records, sgd).judge(flat(MIN_STEPS)) is None  # not Adam-like
    # clearly learning, or falling significantly (a language model from its start)
    assert monitor(records).judge(flat(MIN_STEPS, 0.5 * CHANCE)) is None
    falling = losses([CHANCE * (1.3 - 0.01 * i) for i in range(MIN_STEPS)])
    assert monitor(records).judge(falling) is None


def test_fast_updates_are_reported_whatever_the_loss() -> None:
    """The summary's ``fast`` (the parent's lr trial for a run that learns anyway): Adam
    on a pretrained classifier, no adapter, a window ratio of RATIO_TRIAL or more."""
    learning = flat(MIN_STEPS, 0.5 * CHANCE)
    fast = monitor(steps(MIN_STEPS, ratio=7e-3, lr=1e-3))
    assert fast.judge(learning) is None  # no stall verdict: it learns
    summary = fast.summary(learning)
    assert summary["fast"] is True and summary["adam"] is True
    assert summary["ratio"] == pytest.approx(7e-3)
    between = monitor(steps(MIN_STEPS, ratio=(ev.RATIO_HIGH + ev.RATIO_TRIAL) / 2))
    assert between.summary(learning)["fast"] is False
    for model in (ev.ModelFacts(100_000, 22_000_000, True, True, True, "AdamW"),  # LoRA
                  ev.ModelFacts(22_000_000, 22_000_000, False, False, True, "AdamW"),  # scratch
                  ev.ModelFacts(22_000_000, 22_000_000, True, False, False, "SGD")):
        assert monitor(steps(MIN_STEPS, ratio=7e-3), model).summary(learning)["fast"] is False
    from autofix.run.child.symptoms import Chance

    lm = LossMonitor(level=Chance(3.0, "tokens", "H", None, 1000))
    assert fast.summary(lm)["fast"] is False  # measured on classifiers only
    assert monitor(steps(5, ratio=7e-3)).summary(learning)["fast"] is False  # no window


def test_update_ratio_and_median() -> None:
    assert ev.update_ratio([3.0, 4.0], [3.0, 4.5]) == pytest.approx(0.1)
    assert ev.update_ratio([0.0, 0.0], [0.1, 0.0]) is None  # a zero-initialised matrix
    assert ev.median([3.0, 1.0, 2.0]) == 2.0 and ev.median([1.0, 2.0]) == 1.5
    assert math.isnan(ev.median([]))


def test_the_sample_takes_weight_matrices_first_spread_over_the_model() -> None:
    def t(*shape: int) -> SimpleNamespace:
        return SimpleNamespace(shape=shape)

    named = [("embeddings.word_embeddings.weight", t(30522, 384))]
    named += [(f"layer.{i}.dense.weight", t(384, 384)) for i in range(12)]
    named += [(f"layer.{i}.dense.bias", t(384)) for i in range(12)]
    named.append(("classifier.weight", t(4, 384)))
    chosen = [n for n, _ in choose(named)]
    assert len(chosen) == ev.SAMPLE_PARAMS
    assert chosen[0] == "layer.0.dense.weight" and chosen[-1] == "classifier.weight"
    assert not any("embed" in n or "bias" in n for n in chosen)
    few = [("a.weight", t(8, 8)), ("a.bias", t(8)), ("emb.weight", t(20000, 8))]
    assert [n for n, _ in choose(few)] == ["a.weight", "a.bias", "emb.weight"]


# --- the event and the causes the parent names ----------------------------------------------


def test_the_step_evidence_event_is_merged_into_the_facts(tmp_path: Path) -> None:
    probe = tmp_path / "probe.jsonl"
    lines = [{"event": "step_evidence", "cause": "lr-zero", "step": 10, "evidence": "x"},
             {"event": "step_evidence", "steps": 12, "ratio": 0.0}]
    probe.write_text("".join(json.dumps(x) + "\n" for x in lines))
    report = read_probe(probe)
    assert report.facts["step_evidence"] == {"cause": "lr-zero", "step": 10, "evidence": "x",
                                             "steps": 12, "ratio": 0.0}
    assert step_cause(report) == "lr-zero" and "learning rate above 0" in \
        evidence_advice(report)


def stalled(cause: str, lr: float = 5e-5) -> RunResult:
    report = ProbeReport(steps=[StepRecord(i, 1.1, lr) for i in range(1, 11)],
                         symptom=SymptomReport("stalled-loss", 10, "stalled at step 10: ..."),
                         facts={"step_evidence": {"cause": cause, "step": 10}})
    return RunResult(RunOutcome.OK, 0, 1.0, "", 0, report)


@pytest.mark.parametrize(("cause", "category"), [
    ("zero-grad-before-step", "zero-grad-before-step"),
    ("scheduler-not-stepped", "scheduler-stepped-per-epoch"),
    ("lr-too-high", "lr-too-high"),
    ("lr-zero", "stalled-loss"),
    ("no-gradients", "stalled-loss"),
    ("other-parameters", "optimizer-before-model"),
])
def test_the_evidence_cause_names_the_category(cause: str, category: str) -> None:
    diag = diagnose_symptom(stalled(cause))
    assert diag is not None and diag.category == category
    if category == "stalled-loss":
        assert evidence_advice(stalled(cause).probe) in diag.hint


def test_a_frozen_base_at_a_probe_rate_is_a_linear_probe_not_a_stall() -> None:
    """A head on a frozen encoder trained at 2e-4 or more learns slowly by design: no
    frozen-base verdict (the loss rule's advisory finding stays); under it, the verdict."""
    frozen = ev.ModelFacts(100_000, 22_000_000, True, False, True, "AdamW")
    probe = steps(MIN_STEPS, ratio=1e-3, lr=1e-3)
    assert monitor(probe, frozen).judge(flat(MIN_STEPS)) is None
    at_floor = steps(MIN_STEPS, ratio=1e-3, lr=ev.PROBE_LR)
    assert monitor(at_floor, frozen).judge(flat(MIN_STEPS)) is None
    below = steps(MIN_STEPS, ratio=1e-3, lr=0.5 * ev.PROBE_LR)
    verdict = monitor(below, frozen).judge(flat(MIN_STEPS))
    assert verdict is not None and verdict.cause == ev.FROZEN_BASE
    # one step of the window under the rate (a warmup's end): still judged
    mixed = steps(MIN_STEPS - 1, ratio=1e-3, lr=1e-3) + steps(1, ratio=1e-3, lr=1e-5)
    assert monitor(mixed, frozen).judge(flat(MIN_STEPS)) is not None
    assert monitor(probe, frozen).summary(flat(MIN_STEPS))["frozen"] is True
