"""The verdict on one run: healthy (and whether it proves a symptom fix), or its
diagnosis; and what a healthy run still got wrong (findings)."""

from __future__ import annotations

import math
from pathlib import Path

from autofix.categories import all_categories, get_category, is_category
from autofix.categories.catalogue.divergence import GROWING_TRIAL
from autofix.categories.catalogue.evidence import EPOCHS, STEPS, misstepped_schedule
from autofix.loop.diagnosis import diagnose, diagnose_symptom
from autofix.run.child.symptoms import (
    WINDOW,
    ZERO_LR,
    Chance,
    LossMonitor,
    t95,
)
from autofix.toolkit.source_findings import source_facts
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
    if clean_end and finite and symptom_findings(run):
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


def symptom_findings(run: RunResult) -> list[Finding]:
    """The findings the run's confirmed symptom stands for instead of a failure, one per
    category that answers for it (``Category.symptom_finding``: a flat loss with no known
    cause is learning slowly); empty when there is none, or no symptom."""
    if run.probe.symptom is None:
        return []
    return [found for category in all_categories() if category.symptom_finding is not None
            if (found := category.symptom_finding(run)) is not None]


def advisory(kind: str) -> bool:
    """True for a finding ``kind`` that is advice, not a fault (``Category.advisory``)."""
    return is_category(kind) and get_category(kind).advisory


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
    slow = next((f"; {f.evidence}" for f in run.probe.findings if advisory(f.kind)), "")
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


def source_findings(source: str) -> list[Finding]:
    """What the script's ``source`` (its program, as the run ran it) shows of the faults a
    run that raised nothing cannot: each category's findings on the source readers' facts
    (``Category.source_findings``: a shuffling evaluation loader, statistics taken before
    the split), in registration order; the engine adds them to such a run's findings."""
    facts = source_facts(source)
    return [found for category in all_categories() if category.source_findings is not None
            for found in category.source_findings(facts)]


def source_diagnoses(source: str) -> list[Diagnosis]:
    """The faults read from ``source`` that a run stopped early cannot reach (a label
    metric given raw logits in a hand loop's evaluation): each category's diagnoses on the
    source readers' facts (``Category.source_diagnoses``), in registration order."""
    facts = source_facts(source)
    return [found for category in all_categories() if category.source_diagnoses is not None
            for found in category.source_diagnoses(facts)]


def findings_of(run: RunResult) -> list[Finding]:
    """What a run that raised nothing and stalled nowhere still got wrong (issue 8,
    "trains, but wrongly"), found by the registered categories' hooks: first the finding
    a symptom stands for (:func:`symptom_findings`: a flat loss with no known cause), then
    each category's findings on the run's facts (``Category.findings``), in registration
    order. Reported, never a failure."""
    return [*symptom_findings(run),
            *(found for category in all_categories() if category.findings is not None
              for found in category.findings(run))]


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
    for sized, kind in ((EPOCHS, "scheduler-stepped-per-batch"),
                        (STEPS, "scheduler-stepped-per-epoch")):
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
