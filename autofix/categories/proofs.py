"""What the healthy run after a fix must show before the fix is kept (``Category.proof``).

A fix of an error is proved by the error gone; a symptom's fix or a trial's owes more: a
loss clearly under the chance level within the budget (:func:`learning_failure`), or for a
diverging loss one finite and falling (``Proof.falling``). A silent fault's fix changes how
the script trains or evaluates, so a healthy run after it is not proof either: its finding
must be gone and the script's own evaluation no worse (``Proof.invariant``,
:func:`invariant_failure`), with the category's own invariant holding (``Proof.holds``: a
schedule judged again).
"""

from __future__ import annotations

import math

from autofix.categories.model import Category
from autofix.run.child.symptoms import WINDOW, ZERO_LR, Chance, LossMonitor, t95
from autofix.types import Finding, ProbeReport, RunResult, StepRecord

#: A falling loss loses at least this fraction of its first window's mean by its last.
FALL_SHARE = 0.02
#: An accuracy-like metric (higher is better) counts as worse when it falls by more than
#: this (absolute): the budgeted runs before and after a fix stop at different points of
#: training, so small moves are not the fix's doing.
METRIC_DROP = 0.05
#: A loss counts as worse when it rises by more than this fraction of its value before.
LOSS_RISE = 0.10
#: Names of metrics where higher is better (substrings, lower case).
HIGHER_BETTER = ("accuracy", "acc", "f1", "precision", "recall", "matthews", "auc",
                 "exact_match", "bleu", "rouge")


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


def learning_failure(run: RunResult, falling: bool = False) -> str:
    """Why a healthy run does not prove a symptom's fix or a trial ("" when it does): a
    loss finite and falling where ``falling`` (the ``Proof.falling`` of a diverging
    loss), else a loss clearly under the chance level within the budget."""
    if falling:
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
    "metric", a kind of figure the fix changes the meaning of (``Proof.changes``)."""
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


def still_found(category: Category, run: RunResult) -> Finding | None:
    """The first finding of ``category``'s id in ``run``: among those the probe and the
    source reported, then those the category's ``findings`` hook reads from its facts."""
    own = category.findings(run) if category.findings is not None else []
    return next((f for f in [*run.probe.findings, *own] if f.kind == category.id), None)


def invariant_failure(category: Category, before: RunResult, after: RunResult) -> str:
    """Why the healthy run ``after`` a fix of ``category`` does not prove it, the run
    ``before`` being the one it was diagnosed on ("" when it does, and for a category
    whose proof is no invariant's): the category's own invariant still broken
    (``Proof.holds``: a schedule still stepped at the wrong level), its finding still
    there, or the script's own evaluation worse (:func:`metric_regression`, the figures
    the fix changes the meaning of left out)."""
    proof = category.proof
    if not proof.invariant:
        return ""
    broken = proof.holds(after) if proof.holds is not None else ""
    if broken:
        return broken
    left = still_found(category, after)
    if left is not None:
        return f"{category.id} is still found after it ({left.evidence})"
    worse = metric_regression(before, after, proof.changes)
    return f"the script's own evaluation is worse after it: {worse}" if worse else ""
