"""Candidate fixes, tried and verified before one is kept.

A recipe that could fix a fault in several ways (a learning rate divided by 10, by 100, by
1000; a layer sized from the encoder's config or from the size the run observed; a freeze
loop narrowed to the base model, or the head unfrozen after it) offers them ranked best
first (:meth:`autofix.toolkit.scope.PlannedEdits.choose`: the library's own advice first,
then the smallest change, the frame nearest the user's code). The engine then runs each,
in rank order, as the run that would verify it (same step budget, same data slice, a fork
of the warm interpreter), uncommitted; the first whose run passes the fault's proof
(:meth:`autofix.loop.fixgroups.FixGroup.failed_by`: the same fault gone, nothing broken, a
symptom fix learning) is committed, and its run serves as the verifying run: a kept
candidate costs no extra run. At most :data:`MAX_CANDIDATES` are tried per fix; a
candidate that hides the fault is never kept (the proof is the one every fix owes). The
commit message lists what was tried and why the kept one won (:func:`trials_text`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from autofix.toolkit.apply import apply_recipe
from autofix.toolkit.recipe import Recipe
from autofix.types import Applied, Healthy, RecipeContext, RunResult

#: The most candidates of one recipe tried for one fix (each costs up to one run).
MAX_CANDIDATES = 4


@dataclass(frozen=True)
class Trial:
    """One candidate as its run judged it: its ``label``, the recipe's ``outcome``, the
    run's number and verdict, and ``failure`` (why it did not pass; "" when it did)."""

    label: str
    outcome: Applied
    run_n: int
    evidence: str
    failure: str

    @property
    def passed(self) -> bool:
        return not self.failure


def candidates(recipe: type[Recipe], source: str, rc: RecipeContext, first: Applied
               ) -> list[Applied]:
    """The recipe's candidate sources on ``source``, best first: ``first`` (its choice
    0) and each further choice it offers (:attr:`Applied.options`), up to
    :data:`MAX_CANDIDATES`; a choice that applies to nothing or changes nothing is left
    out, and so is one whose source another candidate already gives."""
    found = [first]
    for choice in range(1, min(len(first.options), MAX_CANDIDATES)):
        outcome = apply_recipe(recipe, source, replace(rc, choice=choice))
        if isinstance(outcome, Applied) and all(outcome.source != f.source for f in found):
            found.append(outcome)
    return found


def label_of(outcome: Applied) -> str:
    """The candidate's one-line label (its option, else the recipe's summary)."""
    if outcome.options and outcome.choice < len(outcome.options):
        return outcome.options[outcome.choice]
    return outcome.summary


def verdict_text(run: RunResult, verdict: object) -> str:
    """What a trial's run showed, in a few words."""
    if isinstance(verdict, Healthy):
        return verdict.evidence
    evidence = getattr(verdict, "evidence", "")
    category = getattr(verdict, "category", "")
    return f"{category}: {evidence}" if category else str(evidence)


def trials_text(trials: list[Trial]) -> str:
    """The commit message's paragraph on the candidates: each tried one with its run and
    outcome, the kept one last ("" when only one was tried and it passed)."""
    if len(trials) < 2 and all(t.passed for t in trials):
        return ""
    lines = [f"Candidates tried ({len(trials)}, best first; each run as the verifying run "
             "would be):"]
    for i, trial in enumerate(trials, 1):
        if trial.passed:
            lines.append(f"    {i}. {trial.label}: kept, run {trial.run_n} passed "
                         f"({trial.evidence})")
        else:
            lines.append(f"    {i}. {trial.label}: not kept, run {trial.run_n}: "
                         f"{trial.failure}")
    return "\n".join(lines)


__all__ = ["MAX_CANDIDATES", "Trial", "candidates", "label_of", "trials_text",
           "verdict_text"]
