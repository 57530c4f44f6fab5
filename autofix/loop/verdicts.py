"""The verdict on one run: healthy (and whether it proves a symptom fix), or its
diagnosis; and what a healthy run still got wrong (findings)."""

from __future__ import annotations

import math
from pathlib import Path

from autofix.categories import get_category, is_category
from autofix.categories.catalogue.divergence import GROWING_TRIAL
from autofix.categories.catalogue.evidence import (
    EPOCHS,
    STEPS,
    misstepped_schedule,
    schedule_evidence,
)
from autofix.loop.diagnosis import diagnose, diagnose_symptom, stall_advice
from autofix.run.child.symptoms import (
    FLAT_EVIDENCE,
    STALL_RATIO,
    WINDOW,
    ZERO_LR,
    Chance,
    LossMonitor,
    fit,
    t95,
)
from autofix.types import (
    Diagnosis,
    Finding,
    Healthy,
    PreflightFault,
    ProbeReport,
    RunOutcome,
    RunResult,
    StepRecord,
)


def judge(run: RunResult, script: Path, root: str = "") -> Healthy | Diagnosis:
    """The verdict on one run: :class:`Healthy` when it ended cleanly (exit 0 or the step
    budget) with no symptom and only finite losses, else its :class:`Diagnosis`.

    ``Healthy.proven`` says whether the loss got clearly under the chance level within
    the budget (:meth:`LossMonitor.clearly_learning`): the proof a symptom fix owes.
    """
    finite = all(s.loss is None or math.isfinite(s.loss) for s in run.probe.steps)
    clean_end = run.outcome in (RunOutcome.OK, RunOutcome.BUDGET) and run.probe.exception is None
    if clean_end and run.probe.faults and run.probe.symptom is None:
        return fault_diagnosis(run.probe.faults[0], run.probe)
    if clean_end and finite and unexplained_flat(run) is not None:
        return Healthy(healthy_evidence(run), False)  # learning slowly (findings_of)
    if run.outcome in (RunOutcome.OK, RunOutcome.BUDGET) and run.probe.symptom is None \
            and finite:
        losses = [s.loss for s in run.probe.steps if s.loss is not None]
        proven = monitor_of(run.probe, losses).clearly_learning()
        return Healthy(healthy_evidence(run), proven)
    return diagnose_symptom(run) or diagnose(run, script, root)


def chance_of(probe: ProbeReport) -> Chance | None:
    """The chance level the probe measured at the training loss (the ``chance`` event),
    else ln C of the ``num_classes`` it reported, else ``None``."""
    level = probe.chance
    if level is not None:
        return Chance(level.value, level.kind, level.label, level.classes, level.tokens)
    if probe.num_classes is not None and probe.num_classes >= 2:
        return Chance.of_classes(probe.num_classes)
    return None


def monitor_of(probe: ProbeReport, losses: list[float]) -> LossMonitor:
    """A :class:`LossMonitor` holding ``losses``, judged against the run's chance level."""
    return LossMonitor(losses=list(losses), level=chance_of(probe))


#: ``via`` of a fault found by a preflight check that raises nothing (a loss on logits).
PREFLIGHT_FAULT = "preflight"


def unexplained_flat(run: RunResult) -> Finding | None:
    """The finding ``learning-slowly`` for a flat-loss stall verdict (the child's
    :meth:`LossMonitor.flat`: near chance, no significant fall) that has no known cause in
    the run's facts, else ``None``. A stall autofix can neither explain nor fix is not
    called a failure: no lr of 1e-3 or more, no lr of 0 or still warming up, no frozen
    base, no loss on logits. Measured on the false-alarm grid (2026-12-01): MiniLM at lr
    1e-5, batch 32, 2 classes, a hand loop of 75 steps falls 0.697 -> 0.686 with little
    noise; the flat rule called that a stall, and it was a slow, healthy run."""
    symptom = run.probe.symptom
    if symptom is None or symptom.kind != "stalled-loss" \
            or not symptom.evidence.startswith(FLAT_EVIDENCE):
        return None
    stalled = get_category("stalled-loss")
    if any(rule.found(run.probe) for rule in stalled.root_causes) or stall_advice(run) \
            or run.probe.faults:
        return None
    rates = [s.lr for s in run.probe.steps if s.lr is not None]
    lr = f"a learning rate of {max(rates):g}" if rates else "an unknown learning rate"
    return Finding("learning-slowly", symptom.step,
                   f"learning slowly: {symptom.evidence[len(FLAT_EVIDENCE):]}; no known cause "
                   f"of a stall ({lr}, trainable weights, a loss that fits the outputs), so "
                   "this is a finding, not a failure: train longer or raise the learning rate "
                   "if it should learn faster")


def fault_diagnosis(fault: PreflightFault, probe: ProbeReport | None = None) -> Diagnosis:
    """The diagnosis of a fault a preflight check found before training (a Keras loss
    that reads probabilities on a model returning logits): its category, the check's
    evidence line, and the category's advice from the run's facts (``probe``), else its
    hint."""
    hint = ""
    if is_category(fault.category):
        category = get_category(fault.category)
        advice = category.advice(probe) if category.advice and probe is not None else ""
        hint = advice or category.hint
    return Diagnosis(
        category=fault.category, evidence=fault.evidence,
        details=(fault.evidence, f"found by the preflight check '{fault.check}' before the "
                                 "first training step"),
        via=PREFLIGHT_FAULT,
        hint=hint)


def healthy_evidence(run: RunResult) -> str:
    """What a run without a fault showed: its step count and losses (and the budget
    extension an unclear verdict used), else its last line."""
    losses = [s.loss for s in run.probe.steps if s.loss is not None]
    if not losses:
        return run.last_line[:200]
    tail = losses[-WINDOW:]
    extended = f" (budget extended to {run.probe.extended_to} steps: the verdict was " \
        "unclear at the step budget)" if run.probe.extended_to else ""
    slow = next((f"; {f.evidence}" for f in run.probe.findings
                 if f.kind == "learning-slowly"), "")
    return (f"{len(run.probe.steps)} steps, loss {losses[0]:.3f} at step 1, "
            f"{sum(tail) / len(tail):.3f} over the last {len(tail)} steps{extended}{slow}")


#: Symptoms whose fix a finite and falling loss proves (:func:`finite_and_falling`): a
#: diverging loss is repaired when it no longer diverges, whatever the task (a regression
#: has no chance level to get under).
FALLING_PROOF = frozenset({"nan-loss", GROWING_TRIAL})
#: A falling loss loses at least this fraction of its first window's mean by its last.
FALL_SHARE = 0.02


def finite_and_falling(losses: list[float]) -> bool:
    """True when every loss is finite and the mean of the last ``w`` steps (``w`` = the
    stall rule's ``WINDOW``, or half the steps when fewer than twice that ran; at least 4
    steps) is under the first ``w`` steps' mean by :data:`FALL_SHARE` of it or more, and
    significantly: the 95 % interval of the difference of the two means (Welch's
    standard error, Student t with ``w - 1`` degrees of freedom) excludes 0."""
    if len(losses) < 4 or not all(math.isfinite(x) for x in losses):
        return False
    w = min(WINDOW, len(losses) // 2)
    first, last = losses[:w], losses[-w:]
    centre_first, centre_last = sum(first) / w, sum(last) / w
    drop = centre_first - centre_last
    if drop < FALL_SHARE * abs(centre_first):
        return False
    spread = math.sqrt(sum((x - centre_first) ** 2 for x in first) / (w - 1) / w
                       + sum((x - centre_last) ** 2 for x in last) / (w - 1) / w)
    return drop - t95(w - 1) * spread > 0


def proof_failure(run: RunResult, symptom: str = "") -> str:
    """Why a healthy run does not prove a fix of ``symptom`` ("" when it does): a loss
    finite and falling for the symptoms of :data:`FALLING_PROOF`, else a loss clearly
    under the chance level within the budget."""
    if symptom in FALLING_PROOF:
        losses = [s.loss for s in run.probe.steps if s.loss is not None]
        if finite_and_falling(losses):
            return ""
        shown = ", ".join(f"{x:.4g}" for x in losses[:3])
        return (f"the loss is not finite and falling ({len(losses)} steps"
                f"{': ' + shown + ', ...' if losses else ''}"
                f"{f', last {losses[-1]:.4g}' if losses else ''})")
    monitor = monitor_of(run.probe, [s.loss for s in run.probe.steps if s.loss is not None])
    if monitor.clearly_learning():
        return ""
    return (f"the loss did not get clearly under the chance level within the budget (last "
            f"{WINDOW} steps: {monitor.window_mean():.3f}, {len(monitor.losses)} steps)")


#: Findings that are advice, not faults: a loss that falls but slowly may be the script's
#: own pace. The others say the script trains wrongly, and a session that leaves one ends
#: ``findings`` (exit 1), never ``clean``.
ADVISORY_FINDINGS = frozenset({"learning-slowly"})

#: ``Diagnosis.via`` of a fix for a healthy run's finding (``zero-grad-missing``): the
#: finding's kind names a category with a recipe, and the fix owes :func:`finding_failure`'s
#: proof rather than a loss under the chance level (a regression has no chance level).
FINDING = "finding"


def finding_failure(run: RunResult, kind: str) -> str:
    """Why the healthy ``run`` after a finding's fix does not prove it ("" when it does):
    the finding ``kind`` is still among the run's findings, or the run took no optimizer
    step (nothing shows the script still trains)."""
    left = next((f for f in run_findings(run) if f.kind == kind), None)
    if left is not None:
        return f"{kind} is still found after it ({left.evidence})"
    if not run.probe.steps:
        return "the run after it took no optimizer step"
    return ""


def run_findings(run: RunResult) -> list[Finding]:
    """Every finding of ``run``: those the probe and the source reported
    (``run.probe.findings``: a shuffled evaluation loader, statistics fitted before the
    split), then :func:`findings_of` the run's facts; the one list the engine proposes
    fixes from, proves them against and reports."""
    return [*run.probe.findings, *findings_of(run)]


def findings_of(run: RunResult) -> list[Finding]:
    """What a run that raised nothing and stalled nowhere still got wrong (issue 8,
    "trains, but wrongly"): class ids regressed by a 1-output head, a hand loop whose
    optimizer never steps (or never zeroes its gradients), one class predicted for every
    row (:func:`constant_prediction`), a model evaluated in training mode
    (:func:`train_mode_eval`), float16 weights trained directly.
    Reported, never a failure. A flat loss with no known cause comes first
    (:func:`unexplained_flat`)."""
    flat = unexplained_flat(run)
    out = [flat] if flat is not None else []
    for trainer in run.probe.trainers:
        train = next((d for d in trainer.datasets if d.role == "train"), None)
        if trainer.num_labels == 1 and train is not None and train.label_kind == "int" \
                and (train.label_classes or 0) + (train.label_max or 0) >= 1:
            out.append(Finding("regression-on-class-ids", 0,
                               f"the model has num_labels=1, so Trainer fits a regression (MSE) "
                               f"to the integer class ids of column '{train.label_column}' "
                               f"(up to {train.label_max or train.label_classes}); for "
                               "classification set num_labels to the number of classes"))
    facts = run.probe.facts
    steps, backward = facts.get("optimizer_steps", 0), facts.get("backward_calls", 0)
    if isinstance(backward, int) and backward >= 2 and steps == 0:
        out.append(Finding("optimizer-never-steps", 0,
                           f"loss.backward() ran {backward} times but optimizer.step() never "
                           "did: the model never changes (a missing optimizer.step(), or a "
                           "gradient accumulation that does not step within the run)"))
    if isinstance(steps, int) and steps >= 2 and backward and facts.get("zero_grad_calls") == 0:
        out.append(Finding("zero-grad-missing", 0,
                           f"{steps} optimizer steps and no zero_grad(): gradients add up "
                           "from step to step (call optimizer.zero_grad() after each step)"))
    eval_mode = train_mode_eval(run)
    if eval_mode is not None:
        out.append(eval_mode)
    out += schedule_findings(run)
    constant = constant_prediction(run)
    if constant is not None:
        out.append(constant)
    if facts.get("param_dtype") == "torch.float16" and run.probe.steps:
        out.append(Finding("float16-weights", 0,
                           "the model's weights are float16 and are trained directly: "
                           "updates under float16 resolution vanish and the loss overflows "
                           "easily (load in float32 and use mixed precision, fp16=True / "
                           "torch.autocast)"))
    return out


#: Fewest labelled rows among the last training batches for the constant-prediction
#: finding (two batches of 16): fewer rows say little about what the model predicts.
CONSTANT_MIN_ROWS = 32
#: The other classes must hold at least this share of those rows ("the data has several").
CONSTANT_MIN_OTHERS = 0.1
#: Fewest optimizer steps for the constant-prediction finding: autofix's default budget.
#: A healthy model first learns the class frequencies, then the inputs: measured on a tiny
#: BERT with 80/20 labels it can learn (lr 1e-3, seeds 0-2), every row was predicted as
#: the majority class up to steps 30-40, never over steps 51-60.
CONSTANT_MIN_STEPS = 60


def label_entropy(labels: list[int]) -> float:
    """Entropy (nats) of the label frequencies in ``labels``: the cross-entropy of a model
    that predicts those frequencies for every row (it learned the classes' shares only)."""
    n = len(labels)
    counts = [labels.count(c) for c in sorted(set(labels))]
    return -sum(k / n * math.log(k / n) for k in counts)


def constant_prediction(run: RunResult) -> Finding | None:
    """``constant-prediction``: at the end of the run the model predicted one class for
    every row of its last training batches (argmax of the logits, the probe's
    ``recent_predicted``), while those rows' labels hold several classes (the others at
    least :data:`CONSTANT_MIN_OTHERS` of :data:`CONSTANT_MIN_ROWS` rows or more), and the
    loss of the last steps is no better than predicting the label frequencies
    (>= ``STALL_RATIO`` x their entropy): the model learned how often each class occurs,
    nothing from the inputs (labels not aligned with the inputs, a heavy class imbalance).

    Never for a run shorter than :data:`CONSTANT_MIN_STEPS` (a healthy model predicts the
    majority class while it learns the frequencies first), one whose loss over the last
    half of the steps still falls significantly (95 % interval of the slope, as the stall
    rule), nor one reported as learning slowly (a loss still at chance is what a slow
    start looks like; that finding already says so). ``None`` when the facts are missing
    (Keras: no logits are seen)."""
    facts = run.probe.facts
    preds, labels = facts.get("recent_predicted"), facts.get("recent_labels")
    if not isinstance(preds, list) or not isinstance(labels, list) \
            or len(preds) != len(labels) or len(labels) < CONSTANT_MIN_ROWS:
        return None
    losses = [s.loss for s in run.probe.steps if s.loss is not None and math.isfinite(s.loss)]
    if len(losses) < CONSTANT_MIN_STEPS \
            or any(f.kind == "learning-slowly" for f in run.probe.findings):
        return None
    trend = fit(losses[-(len(losses) // 2):])
    if trend is not None and trend.slope + trend.half < 0:
        return None  # the loss still falls significantly: the model is leaving the prior
    if len(set(preds)) != 1:
        return None
    predicted = preds[0]
    others = sum(1 for y in labels if y != predicted)
    if others < CONSTANT_MIN_OTHERS * len(labels):
        return None
    prior = label_entropy(labels)
    recent = sum(losses[-WINDOW:]) / len(losses[-WINDOW:])
    if recent < STALL_RATIO * prior:
        return None
    shares = ", ".join(f"{c}: {labels.count(c)}" for c in sorted(set(labels)))
    return Finding("constant-prediction", len(run.probe.steps),
                   f"the model predicts class {predicted} for every one of the last "
                   f"{len(labels)} training rows while their labels hold several classes "
                   f"({shares}); the loss of the last {WINDOW} steps, {recent:.3f}, is no "
                   f"better than predicting those class frequencies ({prior:.3f}): it learned "
                   "how often each class occurs, nothing from the inputs. Check that the "
                   "labels are aligned with the inputs (not shuffled or sorted separately), "
                   "the class balance (class weights, resampling) and the learning rate")


def train_mode_eval(run: RunResult) -> Finding | None:
    """``eval-without-eval-mode``: a forward of the user's model in training mode whose
    output was not trained on (the probe's ``train_mode_evals``: a call site whose forwards
    ran under ``torch.no_grad()`` / ``torch.inference_mode()``, or whose outputs no
    ``backward()`` reached by the end of the run), the model holding a dropout (p > 0) or
    a batch norm layer: its outputs are noisy and batch norm learns from the evaluated
    data. The evidence names the first such line. ``None`` when the facts are missing or
    there is no such site."""
    sites = [s for s in run.probe.facts.get("train_mode_evals") or [] if isinstance(s, dict)]
    if not sites:
        return None
    first = sites[0]
    how = "under no_grad" if first.get("no_grad") else \
        "with gradients on, its outputs never backpropagated"
    calls = sum(int(s.get("calls") or 0) for s in sites)
    evals = run.probe.facts.get("no_grad_eval_calls") or 0
    return Finding("eval-without-eval-mode", 0,
                   f"the model was evaluated in training mode at {first.get('file')}:"
                   f"{first.get('line')} ({first.get('model')} with {first.get('layer')}, "
                   f"{how}): {calls} forwards not trained on without model.eval() "
                   f"({evals} in eval mode), so dropout stays on and batch norm normalises "
                   "with each evaluated batch (and updates its running statistics from it): "
                   "call model.eval() before evaluating and model.train() before training "
                   "again")


#: The finding each misjudged schedule size gives (``autofix/run/child/schedules.py``).
SCHEDULE_FINDINGS = ((EPOCHS, "scheduler-stepped-per-batch"),
                     (STEPS, "scheduler-stepped-per-epoch"))


def schedule_findings(run: RunResult) -> list[Finding]:
    """``scheduler-stepped-per-batch`` / ``scheduler-stepped-per-epoch``: an lr schedule the
    child judged counted in epochs and stepped after every optimizer step, or counted in
    optimizer steps and stepped less often (the run's ``schedule`` facts: the scheduler's
    class and parameters against the loop's epochs and batches); one finding each."""
    out = []
    for sized, kind in SCHEDULE_FINDINGS:
        entry = misstepped_schedule(run.probe, sized)
        if entry is not None:
            out.append(Finding(kind, 0, schedule_evidence(entry)))
    return out


#: The fixes that must show their invariant holding on the next run, and the script's own
#: evaluation no worse (:func:`invariant_failure`), by category: a silent fault's fix
#: changes how the script trains or evaluates, so a healthy run after it is not proof.
INVARIANT_FIXES = frozenset({"scheduler-stepped-per-batch", "scheduler-stepped-per-epoch",
                             "zero-grad-missing", "zero-grad-before-step",
                             "eval-without-eval-mode", "probabilities-to-logit-loss",
                             "metric-on-flat-argmax", "stats-before-split",
                             "label-encoding-mismatch", "labels-masked-beyond-padding"})
#: Fixes that change what one kind of the script's figures means, so that kind is not
#: compared before and after them: a loss given logits instead of probabilities is on
#: another scale ("loss"); a metric computed on class ids instead of flat indices is
#: another number ("metric"). The other kind must still be no worse.
CHANGES_MEANING = {"probabilities-to-logit-loss": "loss", "metric-on-flat-argmax": "metric"}
#: An accuracy-like metric (higher is better) counts as worse when it falls by more than
#: this (absolute): the budgeted runs before and after a fix stop at different points of
#: training, so small moves are not the fix's doing.
METRIC_DROP = 0.05
#: A loss counts as worse when it rises by more than this fraction of its value before.
LOSS_RISE = 0.10
#: Names of metrics where higher is better (substrings, lower case).
HIGHER_BETTER = ("accuracy", "acc", "f1", "precision", "recall", "matthews", "auc",
                 "exact_match", "bleu", "rouge")


def last_metrics(run: RunResult) -> dict[str, float]:
    """The script's last evaluation in ``run`` (``Trainer.evaluate``, the evaluations during
    training), else the last held-out evaluation the probe measured on a hand loop's
    forwards in eval mode (``phases``), else ``{}``."""
    if run.probe.evaluations:
        return dict(run.probe.evaluations[-1][1])
    for phase in reversed(run.probe.phases):
        if phase.metrics:
            return dict(phase.metrics)
    return {}


def metric_regression(before: RunResult, after: RunResult, ignore: str = "") -> str:
    """Which metric of the script's own last evaluation is worse after a fix than before
    it (:data:`METRIC_DROP`, :data:`LOSS_RISE`); ``""`` when none is, or when either run
    did not evaluate (a run stopped at a stall evaluates nothing). ``ignore``: "loss" or
    "metric", a kind of figure the fix changes the meaning of (:data:`CHANGES_MEANING`)."""
    old, new = last_metrics(before), last_metrics(after)
    for name in old.keys() & new.keys():
        key = name.lower()
        if key.endswith(("_runtime", "_per_second", "epoch", "_rows", "_samples")):
            continue
        if "loss" in key and ignore != "loss" \
                and new[name] > old[name] * (1 + LOSS_RISE) + 1e-9:
            return f"{name} rose from {old[name]:.4g} to {new[name]:.4g}"
        if "loss" not in key and ignore != "metric" \
                and any(word in key for word in HIGHER_BETTER) \
                and new[name] < old[name] - METRIC_DROP:
            return f"{name} fell from {old[name]:.4g} to {new[name]:.4g}"
    return ""


def rate_back_to_zero(steps: list[StepRecord]) -> int:
    """The first step, before the last one, at a learning rate of 0 after a step above 0
    (a warmup's first steps at 0 do not count), else 0."""
    started = False
    for record in steps[:-1]:
        if record.lr is None:
            continue
        if record.lr > ZERO_LR:
            started = True
        elif started:
            return record.step
    return 0


def invariant_failure(before: RunResult, after: RunResult, category: str) -> str:
    """Why the healthy run ``after`` a fix of ``category`` (one of :data:`INVARIANT_FIXES`)
    does not prove it, the run ``before`` being the one it was diagnosed on ("" when it
    does, and for other categories): the invariant still broken (a schedule still stepped
    at the wrong level, the learning rate 0 before the last step; the finding still
    there), or the script's own evaluation worse (:func:`metric_regression`)."""
    if category not in INVARIANT_FIXES:
        return ""
    for sized, kind in SCHEDULE_FINDINGS:
        if kind == category and misstepped_schedule(after.probe, sized) is not None:
            return f"{kind} is still found after it"
    if category.startswith("scheduler-"):
        zero = rate_back_to_zero(after.probe.steps)
        if zero:
            return f"the learning rate is 0 from step {zero}, before training ends"
    left = next((f for f in run_findings(after) if f.kind == category), None)
    if left is not None:
        return f"{category} is still found after it ({left.evidence})"
    worse = metric_regression(before, after, CHANGES_MEANING.get(category, ""))
    return f"the script's own evaluation is worse after it: {worse}" if worse else ""
