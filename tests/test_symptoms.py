"""The symptom rules (``autofix/run/child/symptoms.py``) and their diagnosis."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from autofix.loop.diagnosis import diagnose_symptom
from autofix.loop.verdicts import findings_of
from autofix.run.child.symptoms import CLEAR_RATIO, MIN_STEPS, WINDOW, LossMonitor, fit
from autofix.types import (
    DatasetFacts,
    KerasFacts,
    ProbeReport,
    RunOutcome,
    RunResult,
    SampleLoss,
    StepRecord,
    SymptomReport,
    TrainerFacts,
)


def feed(monitor: LossMonitor, losses: list[float]) -> list[str]:
    return [s.kind for s in (monitor.add(x) for x in losses) if s is not None]


def test_flat_loss_at_chance_is_stalled_at_the_final_verdict() -> None:
    monitor = LossMonitor(3)
    assert [s for s in (monitor.add(1.0986) for _ in range(60)) if s] == []
    found = monitor.final()
    assert found is not None and found.kind == "stalled-loss" and found.step == 60
    assert "ln 3" in found.evidence


def test_fall_then_back_to_chance_is_stalled() -> None:
    losses = [1.1] * 10 + [0.8] * 25 + [1.12] * 15  # Adam at 1e-3: falls, comes back
    kinds = feed(LossMonitor(3), losses)
    assert kinds and kinds[0] == "stalled-loss"


def test_learning_then_coming_back_is_stopped_falling() -> None:
    """Adam at 1e-3 on MiniLM, measured 10-step means of a real run (seed 2)."""
    windows = [0.804, 1.087, 0.698, 0.573, 0.804, 0.875, 0.928, 1.089]
    monitor = LossMonitor(3)
    found = [s for w in windows for s in (monitor.add(w) for _ in range(10)) if s]
    assert found and found[0].kind == "stalled-loss"
    # at the 60-step budget the rise is not yet 4 standard errors (the residual noise of
    # a line through this curve is large): flagged one step into the extension
    assert found[0].step <= 65 and "stopped falling" in found[0].evidence


def test_measured_healthy_curves_are_silent() -> None:
    """10-step means of healthy runs at lr 5e-5 (TF seeds 0-2, PyTorch loop seeds 0-2)."""
    for windows in ([1.098, 1.066, 0.950, 0.722, 0.454, 0.245, 0.131, 0.088],
                    [1.095, 1.077, 0.963, 0.769, 0.562, 0.336, 0.184, 0.113],
                    [1.096, 1.065, 0.980, 0.758, 0.445, 0.248, 0.121, 0.084],
                    [1.092, 1.043, 0.909, 0.680, 0.436, 0.201, 0.107, 0.077]):
        monitor = LossMonitor(3)
        assert [s for w in windows for s in (monitor.add(w) for _ in range(10)) if s] == []
        assert monitor.clearly_learning()


def test_healthy_curve_is_silent_and_proves_learning() -> None:
    # shape measured on the sample at lr 5e-5: flat ~15 steps, then falling
    losses = [1.10] * 15 + [1.10 - 0.02 * i for i in range(45)]
    monitor = LossMonitor(3)
    assert feed(monitor, losses) == []
    assert monitor.clearly_learning()


def test_no_chance_level_without_num_classes() -> None:
    assert feed(LossMonitor(None), [1.1] * 80) == []


def test_first_nan_is_reported_at_its_step() -> None:
    monitor = LossMonitor(3)
    symptoms = [monitor.add(x) for x in [1.0, 0.9, math.nan, 0.8]]
    assert symptoms[2] is not None and symptoms[2].kind == "nan-loss"
    assert symptoms[2].step == 3 and "step 3" in symptoms[2].evidence


def test_not_proven_with_too_few_steps() -> None:
    monitor = LossMonitor(3, [0.2] * (WINDOW - 1))
    assert not monitor.clearly_learning()


def run_with(report: ProbeReport) -> RunResult:
    return RunResult(RunOutcome.OK, 0, 1.0, "", 0, report)


def test_stall_root_causes_from_facts() -> None:
    keras = KerasFacts("tf_keras", "TFBertForSequenceClassification", True, 3, "Adam", 1e-3,
                       "sparse_categorical_crossentropy", None)
    report = ProbeReport(keras=[keras],
                         steps=[StepRecord(i, 1.1, 0.0010000000474974513) for i in range(1, 41)],
                         symptom=SymptomReport("stalled-loss", 40, "loss stalled near chance"))
    diag = diagnose_symptom(run_with(report))
    assert diag is not None
    assert diag.causes == ("keras-string-loss", "lr-too-high")
    assert diag.category == "keras-string-loss" and diag.via == "stalled-loss"


def test_stall_without_known_cause() -> None:
    report = ProbeReport(steps=[StepRecord(i, 1.1, 5e-5) for i in range(1, 41)],
                         symptom=SymptomReport("stalled-loss", 40, "loss stalled near chance"))
    diag = diagnose_symptom(run_with(report))
    assert diag is not None and diag.category == "stalled-loss" and diag.causes == ()


def test_nan_from_labels_outside_the_head_is_label_out_of_range() -> None:
    samples = (SampleLoss(0, 0, 0.7), SampleLoss(1, 2, None), SampleLoss(2, 1, 0.6))
    report = ProbeReport(symptom=SymptomReport("nan-loss", 5, "loss is nan at step 5", 2, 2,
                                               samples))
    diag = diagnose_symptom(run_with(report))
    assert diag is not None and diag.category == "label-out-of-range"
    assert diag.via == "nan-loss" and "[2]" in diag.evidence and "[1]" in diag.evidence


def test_nan_from_an_all_ignored_batch() -> None:
    samples = tuple(SampleLoss(i, -100, None) for i in range(4))
    report = ProbeReport(symptom=SymptomReport("nan-loss", 3, "loss is nan at step 3", 3, 3,
                                               samples))
    diag = diagnose_symptom(run_with(report))
    assert diag is not None and diag.category == "nan-loss"
    assert "step 3" in diag.evidence and "all 4 labels of that batch are -100" in diag.evidence
    assert diag.details[0] == "batch sample 0: label -100, loss n/a"


def test_symptoms_module_is_stdlib_only() -> None:
    """It runs inside the user's interpreter, where autofix is not installed."""
    source = (Path(__file__).parent.parent / "autofix" / "run" / "child" / "symptoms.py").read_text()
    imports = [ln for ln in source.splitlines() if ln.startswith(("import ", "from "))]
    assert all(not ln.split()[1].startswith(("autofix", "torch", "numpy")) for ln in imports)


# --- the statistics on synthetic curves (issue 8) -----------------------------------------


def judge(losses: list[float], classes: int = 3, budget: int = 60,
          lrs: list[float | None] | None = None) -> tuple[str, int]:
    """Replays a curve as the child does: per-step rule, one extension, final verdict."""
    monitor = LossMonitor(classes)
    limit = budget
    rates = lrs or [5e-5] * len(losses)
    for i, (loss, lr) in enumerate(zip(losses, rates, strict=False), start=1):
        found = monitor.add(loss, lr)
        if found is not None:
            return found.kind, found.step
        if i >= limit:
            if limit == budget and monitor.should_extend():
                limit = 2 * budget
                continue
            final = monitor.final()
            return (final.kind, final.step) if final else ("none", i)
    return "none", len(losses)


def noisy(start: float, slope: float, sd: float, n: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [start + slope * i + rng.gauss(0, sd) for i in range(n)]


def test_fit_recovers_slope_and_interval() -> None:
    trend = fit([1.0 - 0.01 * i for i in range(20)])
    assert trend is not None and abs(trend.slope + 0.01) < 1e-9 and trend.half < 1e-9
    noisy_trend = fit(noisy(1.1, -0.002, 0.05, 60, 0))
    assert noisy_trend is not None
    assert noisy_trend.slope - noisy_trend.half < -0.002 < noisy_trend.slope + noisy_trend.half
    assert 0.035 < noisy_trend.noise < 0.065


def test_slow_learning_is_never_a_stall() -> None:
    """The issue's report: 1.09 -> 1.04 over 40 steps and falling (lr 2e-5, batch 8),
    batch noise 0.05: never a stall; at the extended budget "learning slowly"."""
    for seed in range(30):
        kind, step = judge(noisy(1.09, -0.00125, 0.05, 120, seed))
        assert kind in ("learning-slowly", "none"), (seed, kind, step)


def test_very_slow_learning_is_not_a_stall_either() -> None:
    for seed in range(30):
        kind, _ = judge(noisy(1.10, -0.0006, 0.04, 120, seed))
        assert kind != "stalled-loss", seed


def test_flat_noisy_loss_at_chance_is_a_stall_within_the_extension() -> None:
    """Noise 0.02: measured 0.017 around the trend on Trainer at lr 1e-3 (bench grid)."""
    verdicts = [judge(noisy(1.0986, 0.0, 0.02, 120, seed)) for seed in range(20)]
    # a flat noisy curve shows a significant slope by chance 1 time in 20 (5 %), and the
    # projection is near its edge at this noise (16 of these 20 seeds flagged): then the
    # verdict is the safe "learning-slowly", never a wrong stall
    assert sum(v == ("stalled-loss", 120) for v in verdicts) >= 15, verdicts
    assert all(kind in ("stalled-loss", "learning-slowly") for kind, _ in verdicts)


def test_flat_curve_is_judged_only_at_the_end_of_the_extension() -> None:
    """A flat start is what healthy slow runs look like too: no verdict before step 120."""
    kind, step = judge(noisy(1.0986, 0.0, 0.002, 120, 1))
    assert (kind, step) == ("stalled-loss", 120)


def test_measured_slow_healthy_run_is_learning_slowly() -> None:
    """10-step means of a real run (bench grid: Trainer, lr 1e-5, batch 8, 4 classes)."""
    windows = [1.388, 1.385, 1.388, 1.384, 1.384, 1.381, 1.379, 1.377, 1.370, 1.369, 1.366,
               1.354]
    rng = random.Random(0)
    kind, step = judge([w + rng.gauss(0, 0.009) for w in windows for _ in range(10)], 4)
    assert (kind, step) == ("learning-slowly", 120)


def test_under_the_line_and_falling_is_no_finding() -> None:
    """A healthy accelerate loop (bench_realworld run_glue_no_trainer, 3 classes, 40 steps):
    1.098 over steps 1-10, 0.913 over steps 31-40 against a line of 0.934. The window's
    noise kept the upper bound above the line on some seeds: no finding when the mean is
    under it and the fall is significant; a curve whose mean stops above the line keeps
    the finding."""
    under, slow = [], []
    for seed in range(60):
        monitor = LossMonitor(3, noisy(1.11, -0.0055, 0.07, 40, seed))
        found = monitor.final()
        (under if monitor.under_line() else slow).append(found is not None)
    assert len(under) >= 30 and len(slow) >= 10  # both faces occur on these curves
    assert sum(under) <= 3, under  # only where neither the fall nor the slope is significant
    assert all(slow), slow  # above the line: still "learning slowly"


def test_zero_learning_rate_is_a_stall_at_once() -> None:
    lrs: list[float | None] = [5e-5 * (1 - i / 10) if i < 10 else 0.0 for i in range(120)]
    monitor = LossMonitor(4)
    found = [s for s in (monitor.add(x, lr) for x, lr in
                         zip(noisy(1.386, 0.0, 0.08, 120, 3), lrs, strict=True)) if s]
    assert found and found[0].step == MIN_STEPS and "learning rate of 0" in found[0].evidence


def test_no_flat_verdict_while_warming_up() -> None:
    lrs: list[float | None] = [5e-5 * i / 200 for i in range(120)]
    monitor = LossMonitor(3)
    assert [s for s in (monitor.add(x, lr) for x, lr in
                        zip(noisy(1.0986, 0.0, 0.002, 100, 1), lrs[:100], strict=True)) if s] == []
    final = monitor.final()
    assert final is not None and final.kind == "learning-slowly"
    assert "warmup not finished" in final.evidence


def test_extension_only_when_unclear() -> None:
    learning = LossMonitor(3, [0.3] * 60)
    assert not learning.should_extend()
    slow = LossMonitor(3, noisy(1.09, -0.001, 0.05, 60, 0))
    assert slow.should_extend()
    assert not LossMonitor(None, [1.1] * 60).should_extend()


def test_proof_needs_the_window_clearly_under_chance() -> None:
    edge = CLEAR_RATIO * math.log(3)
    assert not LossMonitor(3, noisy(edge - 0.01, 0.0, 0.1, 60, 0)).clearly_learning()
    assert LossMonitor(3, noisy(0.5, 0.0, 0.1, 60, 0)).clearly_learning()


# --- root causes and findings from the run's facts (issue 8) ------------------------------


def stalled(steps: list[StepRecord], facts: dict[str, object] | None = None) -> ProbeReport:
    return ProbeReport(steps=steps, facts=dict(facts or {}),
                       symptom=SymptomReport("stalled-loss", 120, "loss stalled near chance"))


def test_stall_with_a_schedule_at_zero_is_reported_with_advice() -> None:
    steps = [StepRecord(i, 1.38, max(0.0, 5e-5 * (1 - i / 10))) for i in range(1, 121)]
    diag = diagnose_symptom(run_with(stalled(steps)))
    assert diag is not None and diag.category == "stalled-loss" and diag.causes == ()
    assert "learning rate is 0 from step 10" in diag.evidence
    assert "num_training_steps" in diag.hint


def test_stall_with_a_frozen_base_is_reported_with_advice() -> None:
    steps = [StepRecord(i, 1.38, 5e-5) for i in range(1, 121)]
    facts = {"params_total": 22_714_372, "params_trainable": 1_540}
    diag = diagnose_symptom(run_with(stalled(steps, facts)))
    assert diag is not None and "0.0 %) are trainable" in diag.evidence
    assert "base model is frozen" in diag.hint


def test_stall_during_a_warmup_longer_than_training() -> None:
    steps = [StepRecord(i, 1.1, 5e-5 * i / 1000) for i in range(1, 121)]
    diag = diagnose_symptom(run_with(stalled(steps)))
    assert diag is not None and "warmup is longer" in diag.evidence


def test_integer_classes_on_a_one_output_head_is_a_finding() -> None:
    train = DatasetFacts("train", ("label", "input_ids"), 1200, "label", "int", None, 0, 2)
    report = ProbeReport(trainers=[TrainerFacts("Trainer", "BertForSequenceClassification", 1,
                                                (train,))])
    found = findings_of(run_with(report))
    assert [f.kind for f in found] == ["regression-on-class-ids"]
    assert "num_labels=1" in found[0].evidence and "up to 2" in found[0].evidence
    healthy = ProbeReport(trainers=[TrainerFacts("Trainer", "Bert", 3, (train,))])
    assert findings_of(run_with(healthy)) == []


def test_hand_loop_facts_give_findings() -> None:
    never = ProbeReport(facts={"optimizer_steps": 0, "backward_calls": 60,
                               "zero_grad_calls": 0})
    assert [f.kind for f in findings_of(run_with(never))] == ["optimizer-never-steps"]
    no_zero = ProbeReport(facts={"optimizer_steps": 60, "backward_calls": 60,
                                 "zero_grad_calls": 0})
    assert [f.kind for f in findings_of(run_with(no_zero))] == ["zero-grad-missing"]
    fine = ProbeReport(facts={"optimizer_steps": 60, "backward_calls": 60,
                              "zero_grad_calls": 60, "param_dtype": "torch.float32"})
    assert findings_of(run_with(fine)) == []


def test_nan_with_float16_weights_names_that_face() -> None:
    samples = (SampleLoss(0, 0, 0.7), SampleLoss(1, 1, 0.6))
    report = ProbeReport(facts={"param_dtype": "torch.float16"},
                         symptom=SymptomReport("nan-loss", 7, "loss is nan at step 7", 3, 3,
                                               samples))
    diag = diagnose_symptom(run_with(report))
    assert diag is not None and diag.category == "nan-loss"
    assert "face: float16 weights trained directly" in diag.evidence


def child_events(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, losses: list[float],
                 classes: int = 3) -> list[dict[str, object]]:
    """Feeds the child's ``record_step`` (budget 60) and returns the events it wrote."""
    from autofix.run.child import events

    probe = tmp_path / "probe.jsonl"
    monkeypatch.setattr(events, "PROBE_FILE", str(probe))
    monkeypatch.setattr(events, "MAX_STEPS", 60)
    monkeypatch.setattr(events.State, "steps", 0)
    monkeypatch.setattr(events.State, "stop", "")
    monkeypatch.setattr(events.State, "limit", 60)
    monkeypatch.setattr(events.State, "last_batch", None)
    monkeypatch.setattr(events.State, "monitor", LossMonitor(classes))
    for loss in losses:
        if events.record_step(loss, 5e-5):
            break
    return [json.loads(line) for line in probe.read_text().splitlines()]


def test_child_extends_an_unclear_run_once_then_judges(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    flat = child_events(monkeypatch, tmp_path, [1.0986] * 200)
    kinds = [e["event"] for e in flat if e["event"] != "step"]
    assert kinds == ["budget_extended", "symptom"]
    assert flat[-1]["step"] == 120 and flat[-1]["kind"] == "stalled-loss"
    assert next(e for e in flat if e["event"] == "budget_extended")["limit"] == 120


def test_child_reports_slow_learning_as_a_finding(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    slow = child_events(monkeypatch, tmp_path, noisy(1.09, -0.001, 0.01, 200, 0))
    kinds = [e["event"] for e in slow if e["event"] != "step"]
    assert kinds == ["budget_extended", "finding", "budget_reached"]
    assert "learning slowly" in str(slow[-2]["evidence"])


def test_child_stops_a_learning_run_at_the_budget(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    fast = child_events(monkeypatch, tmp_path, [1.1 - 0.015 * i for i in range(70)])
    assert [e["event"] for e in fast if e["event"] != "step"] == ["budget_reached"]
    assert fast[-1]["step"] == 60


# --- constant-prediction (issue 8, "trains, but wrongly") -----------------------------------


def predicting(losses: list[float], preds: list[int], labels: list[int],
               findings: tuple[str, ...] = ()) -> ProbeReport:
    from autofix.types import Finding

    return ProbeReport(steps=[StepRecord(i, x, 5e-5) for i, x in enumerate(losses, start=1)],
                       facts={"recent_predicted": preds, "recent_labels": labels},
                       findings=[Finding(k, len(losses), "") for k in findings])


def test_one_class_predicted_for_every_row_is_a_finding() -> None:
    """80/20 labels unrelated to the inputs: the model learns the frequencies only (loss
    at their entropy, 0.500, well under ln 2), and predicts class 0 for every row."""
    labels = [0] * 128 + [1] * 32
    found = findings_of(run_with(predicting([0.51] * 60, [0] * 160, labels)))
    assert [f.kind for f in found] == ["constant-prediction"]
    evidence = found[0].evidence
    assert "predicts class 0 for every one of the last 160 training rows" in evidence
    assert "(0: 128, 1: 32)" in evidence and "(0.500)" in evidence
    assert "aligned with the inputs" in evidence


def test_constant_prediction_needs_the_evidence() -> None:
    labels = [0] * 128 + [1] * 32
    const = [0] * 160
    cases = {
        "varied predictions": predicting([0.51] * 60, [0] * 150 + [1] * 10, labels),
        "one class in the labels": predicting([0.01] * 60, const, [0] * 160),
        "others under 10 %": predicting([0.2] * 60, const, [0] * 150 + [1] * 10),
        "too few rows": predicting([0.51] * 60, [0] * 16, [0] * 12 + [1] * 4),
        "a quick check": predicting([0.51] * 10, const, labels),
        "under the default budget": predicting([0.51] * 30, const, labels),
        "loss still falling": predicting([0.6 - 0.002 * i for i in range(60)], const, labels),
        "loss under the frequencies' entropy": predicting([0.3] * 60, const, labels),
        "learning slowly says it": predicting([0.69] * 120, const, [0, 1] * 80,
                                              ("learning-slowly",)),
        "no facts (Keras)": ProbeReport(steps=[StepRecord(i, 0.5, 1e-5) for i in range(60)]),
    }
    for name, report in cases.items():
        assert findings_of(run_with(report)) == [], name


def test_balanced_data_learning_fast_never_gets_it() -> None:
    """On balanced labels one constant class cannot take the loss under ln C (the entropy
    of the frequencies), so a run clearly under chance never gets the finding; a loss at
    chance ends as a stall or as learning slowly, not as this finding."""
    found = findings_of(run_with(predicting([0.4] * 60, [1] * 64, [0, 1] * 32)))
    assert found == []


def test_child_keeps_the_last_batches_predictions(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    """``note_predictions`` keeps argmax and labels of classifier batches only (rows
    labelled -100 left out, float or token-level targets ignored), the last 10 batches."""
    import collections

    import torch

    from autofix.run.child import closing, events

    probe = tmp_path / "probe.jsonl"
    monkeypatch.setattr(events, "PROBE_FILE", str(probe))
    monkeypatch.setattr(events.State, "stop", "")
    monkeypatch.setattr(events.State, "monitor", LossMonitor(2))
    monkeypatch.setattr(events.State, "recent",
                        collections.deque(maxlen=events.RECENT_BATCHES))
    logits = torch.tensor([[2.0, 0.0], [0.0, 1.0], [3.0, 0.0]])
    events.note_predictions(torch.tensor([0, 1, -100]), logits)
    events.note_predictions(torch.tensor([0.5, 1.0, 2.0]), logits)  # regression targets
    events.note_predictions(torch.tensor([[0, 1]] * 3), torch.zeros(3, 2, 2))  # tokens
    for _ in range(12):
        events.note_predictions(torch.tensor([1, 1, 0]), logits)
    closing.train_facts()
    facts = json.loads(probe.read_text().splitlines()[-1])
    assert facts["recent_predicted"] == [0, 1, 0] * 10
    assert facts["recent_labels"] == [1, 1, 0] * 10
