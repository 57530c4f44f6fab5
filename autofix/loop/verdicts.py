"""The verdict on one run: healthy (and whether it proves a symptom fix), or its
diagnosis; and what a healthy run still got wrong (findings)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

from autofix.categories import all_categories, get_category, is_category
from autofix.categories.proofs import monitor_of
from autofix.loop.diagnosis import diagnose, diagnose_exception, diagnose_symptom
from autofix.run.child.symptoms import WINDOW
from autofix.toolkit.source_findings import source_facts
from autofix.types import (
    Diagnosis,
    ExceptionInfo,
    Finding,
    Healthy,
    PreflightFault,
    ProbeReport,
    RunOutcome,
    RunResult,
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


def judge_preflight(run: RunResult, exc: ExceptionInfo, script: Path, root: str = ""
                    ) -> Diagnosis | None:
    """The diagnosis of ``exc``, a preflight finding of ``run`` (one of
    ``run.probe.preflight``: a fault the checks before the first step found besides the one
    the run raised), read as the categories read a preflight finding: the probe's
    ``exception`` that finding, no symptom (:func:`diagnose_exception`). ``None`` when the
    run ended as a healthy run does (exit 0 or the budget, every loss finite: the finding
    stopped nothing); a run past ``--timeout`` is diagnosed as the run."""
    finite = all(s.loss is None or math.isfinite(s.loss) for s in run.probe.steps)
    if run.outcome in (RunOutcome.OK, RunOutcome.BUDGET) and finite:
        return None
    if run.outcome is RunOutcome.TIMEOUT:
        return diagnose(run, script, root)
    seen = dataclasses.replace(run.probe, exception=exc, symptom=None)
    return diagnose_exception(exc, seen, script, root)


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


def owes_falling(category: str) -> bool:
    """True when a fix for ``category`` (a symptom's, or a trial's) is proved by a loss
    finite and falling rather than one under the chance level (``Proof.falling``: a
    diverging loss)."""
    return is_category(category) and get_category(category).proof.falling


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
