"""The fix commit's message: what happened, where, the evidence, the change, the trailers."""

from __future__ import annotations

from autofix.categories import SLOW_TRIAL, SOURCE_SCAN, get_category, is_category
from autofix.categories.catalogue.divergence import GROWING_TRIAL
from autofix.loop.api_check import API_PREFLIGHT
from autofix.loop.diagnosis import PREFLIGHT_CHECK
from autofix.loop.fixgroups import symptom_of
from autofix.loop.verdicts import PREFLIGHT_FAULT, owes_falling
from autofix.toolkit.recipe import Recipe
from autofix.types import Applied, Diagnosis
from autofix.vcs.trailers import Trailers

#: The longest change clause a subject line takes (after "autofix: ").
SUBJECT_WIDTH = 64


def subject(recipe: type[Recipe], outcome: Applied) -> str:
    """The commit subject after "autofix: ": the recipe's title, or for a recipe that
    asks for it (``subject_from_change``) the first clause of the change's summary when it
    is at most :data:`SUBJECT_WIDTH` characters."""
    clause = outcome.summary.split("; ", 1)[0].strip()
    if len(clause) > SUBJECT_WIDTH and clause.endswith(")") and " (" in clause:
        clause = clause[:clause.rindex(" (")]  # the change without its explanation
    if recipe.subject_from_change and clause and len(clause) <= SUBJECT_WIDTH:
        return clause
    return recipe.title


def commit_message(recipe: type[Recipe], outcome: Applied, diag: Diagnosis, run_n: int,
                   rel: str, place: str = "", rank: str = "", tried: str = "") -> str:
    """The fix commit's message: subject, evidence, recipe summary and trailers.

    ``place`` names the failing line for a person (``"cell 3, line 2"`` in a notebook);
    ``rank`` the rank that failed first in a distributed launch (``"1 of 2"``); ``tried``
    the paragraph on the candidate fixes tried before this one was kept
    (:func:`autofix.loop.candidates.trials_text`). A fault a preflight check found before
    the first training step (the diagnosis's fact ``preflight_check``) is said to be that
    check's finding, at the line where the check ran (``trainer.train()``, ``fit``, the
    loop's first batch), not a failure of training there.
    """
    where = f"{rel}:{diag.line}" if diag.line else rel
    if place and not place.startswith("line "):
        where = f"{rel}, {place}"
    symptom = symptom_of(diag)
    check = diag.fact(PREFLIGHT_CHECK)
    happened = f"Run {run_n} showed {symptom}" if symptom else f"Run {run_n} failed with"
    if check and not symptom:
        happened = f"Run {run_n}'s preflight check '{check}' found, before the first " \
                   "training step"
    if diag.via == API_PREFLIGHT:
        happened = "Before the first run, the installed library would raise"
    elif diag.via == SLOW_TRIAL:
        happened = f"Run {run_n} trained without a fault, but (this fix is a trial, kept " \
                   "only if the next run proves it)"
        symptom = SLOW_TRIAL
    elif diag.via == GROWING_TRIAL:
        happened = f"Run {run_n} trained without a fault while its loss grew (this fix is a " \
                   "trial, kept only if the next run's loss is finite and falling)"
        symptom = GROWING_TRIAL
    elif symptom and owes_falling(symptom) and diag.causes:
        happened += " (this fix is kept only if the next run's loss is finite and falling)"
    elif diag.via == PREFLIGHT_FAULT:
        happened = f"Run {run_n}, before its first training step, found"
    elif diag.via == SOURCE_SCAN:
        happened = f"Reading the script when run {run_n} failed found"
    lines = [f"autofix: {subject(recipe, outcome)}", "", f"{happened}:", f"    {diag.evidence}"]
    if not symptom and diag.via != PREFLIGHT_FAULT:
        ran = ", where the check ran" if check else ""
        lines.append(f"at {where}{ran}" + (f": {diag.line_text.strip()}" if diag.line_text
                                           else ""))
    if diag.via and is_category(diag.via) and get_category(diag.via).rerun_env:
        lines.append(f"(found by a rerun after {diag.via}: {get_category(diag.via).rerun_note};"
                     " the first error pointed at the wrong line)")
    if diag.details:
        header = "Training evidence:" if symptom else (
            "Preflight evidence:" if diag.via == PREFLIGHT_FAULT else
            "Source evidence:" if diag.via == SOURCE_SCAN else "Key traceback lines:")
        lines += ["", header, *(f"    {d}" for d in diag.details)]
    lines += ["", f"Change: {outcome.summary}", ""]
    if tried:
        lines += [tried, ""]
    lines += Trailers(diag.category, recipe.id, diag.via, rank).lines()
    return "\n".join(lines) + "\n"
