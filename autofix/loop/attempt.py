"""An attempt at a fix: the recipes for a diagnosis applied, their candidates run, the first
that passes committed.

:meth:`Fixer.apply` tries the recipes of each cause of a diagnosis in the declared order
(``Category.recipes``), on the script and then on the user's own modules; a recipe that
offers several ranked candidates has each run, uncommitted, until one passes the fault's
proof (:mod:`autofix.loop.candidates`), and that run becomes the verifying run of its fix
(:class:`Verified`). Outcomes are typed: :class:`Fixed` (the commits, and a kept
candidate's run), or why nothing was fixed (:class:`~autofix.types.NoRecipe`,
:class:`~autofix.types.NotApplicable`, :class:`~autofix.types.RecipeCrashed`).
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass
from pathlib import Path

from autofix.categories import UNKNOWN, get_category, is_category
from autofix.errors import save_traceback
from autofix.loop.api_check import API_PREFLIGHT
from autofix.loop.candidates import Trial, candidates, label_of, trials_text, verdict_text
from autofix.loop.fixgroups import FixGroup, symptom_of
from autofix.loop.messages import commit_message
from autofix.loop.session import Session, Verdict
from autofix.loop.verdicts import fault_diagnosis, source_diagnoses
from autofix.run.programs import CellsLost
from autofix.toolkit.apply import apply_recipe
from autofix.toolkit.recipe import Recipe
from autofix.types import (
    Applied,
    CandidateRecord,
    Diagnosis,
    FixRecord,
    NoRecipe,
    NotApplicable,
    RecipeContext,
    RecipeCrashed,
    RunResult,
)


@dataclass(frozen=True)
class Verified:
    """A kept candidate's run: its verdict, the sources it ran (absolute path -> text) and
    its number; the verifying run of its fix while the branch holds exactly those sources
    and no run came after it."""

    run: RunResult
    verdict: Verdict
    sources: dict[str, str]
    n: int


@dataclass(frozen=True)
class Fixed:
    """What an attempt committed: its fixes, in order, and the run of the last candidate
    kept among them (``None``: none was tried)."""

    fixes: tuple[FixRecord, ...]
    verified: Verified | None = None

    def then(self, more: Fixed) -> Fixed:
        """These fixes and ``more``'s after them (the later kept candidate's run)."""
        return Fixed((*self.fixes, *more.fixes), more.verified or self.verified)


#: What applying the recipes for one diagnosis gave: the fixes, or why there is none.
Outcome = Fixed | NoRecipe | NotApplicable | RecipeCrashed


@dataclass(frozen=True)
class _Committed:
    """One recipe's fix, committed, and its kept candidate's run."""

    fix: FixRecord
    verified: Verified | None


@dataclass(frozen=True)
class _Kept:
    """The candidate kept: the recipe's outcome, the commit's paragraph on what was tried,
    the trials and the kept one's run (``None``: one way only, nothing run)."""

    outcome: Applied
    tried: str
    trials: tuple[Trial, ...] = ()
    verified: Verified | None = None


class Fixer:
    """Applies recipes for the diagnoses of one :class:`Session` and commits the fixes;
    ``attempts`` counts the diagnoses it looked up recipes for (``--max-iterations``)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.attempts = 0

    def apply(self, run: RunResult, diag: Diagnosis,
              exclude: set[str] | frozenset[str] = frozenset(), run_n: int | None = None
              ) -> Outcome:
        """Apply the first applicable recipe for each cause of ``diag`` (diagnosed on
        ``run``, run number ``run_n``: 0 before any run; default the latest), skipping the
        ids in ``exclude``, one commit each. Returns the fixes, or why there is none:
        :class:`NoRecipe`, :class:`NotApplicable` (every recipe declined) or
        :class:`RecipeCrashed` (the last crash, when no recipe applied and one crashed). A
        crashing recipe is reported in ``warnings`` and the next one is tried. When the
        symptom's causes are alternatives (``Category.alternatives``: a diverging loss)
        only the first cause whose recipe applies is fixed."""
        session = self.session
        number = session.n if run_n is None else run_n
        causes = diag.causes or (diag.category,)
        recipes = {c: [r for r in session.recipes(c) if r.id not in exclude] for c in causes}
        if not any(recipes.values()):
            why = get_category(diag.category).no_recipe if is_category(diag.category) \
                else "no recipe for it"
            return NoRecipe(diag.category, f"{diag.category}: {why}")
        fixed = Fixed(())
        reasons: list[str] = []
        prechecks: list[str] = []  # "the script never mentions ...": said only when alone
        crash: RecipeCrashed | None = None
        modules = session.modules(run)
        symptom = symptom_of(diag)  # causes that are alternatives: the first that applies
        alternatives = bool(symptom) and get_category(symptom).alternatives
        for cause in causes:
            if fixed.fixes and alternatives:
                break
            cause_diag = dataclasses.replace(diag, category=cause)
            for recipe in recipes[cause]:
                done = self.apply_one(recipe, cause, cause_diag, diag, run, number, modules)
                if isinstance(done, RecipeCrashed):
                    crash = done
                    reasons.append(f"{recipe.id}: crashed")
                elif isinstance(done, NotApplicable):
                    (prechecks if done.precheck else reasons).append(f"{recipe.id}: {done.reason}")
                else:
                    session.result.fixes.append(done.fix)
                    fixed = fixed.then(Fixed((done.fix,), done.verified))
                    break
        self.attempts += 1
        if fixed.fixes:
            return fixed
        tried = "; ".join(reasons or prechecks)
        if crash is not None and all(r.endswith(": crashed") for r in reasons):
            return crash
        if diag.category == UNKNOWN.id:
            return NotApplicable(f"{diag.category}: autofix has no category for this failure "
                                 f"(tried {tried})")
        return NotApplicable(f"{diag.category}: recipe not applicable ({tried})")

    def apply_one(self, recipe: type[Recipe], cause: str, cause_diag: Diagnosis,
                  diag: Diagnosis, run: RunResult, number: int, modules: list[str]
                  ) -> _Committed | NotApplicable | RecipeCrashed:
        """Try ``recipe`` on the script, then on each of the user's ``modules``; commit the
        first edit it makes. Returns the fix, or why there is none (the script's reason; a
        ``precheck`` one when every file was declined by the recipe's pre-check), or the
        crash (reported in ``warnings``)."""
        session, branch = self.session, self.session.branch
        probe = run.probe
        program = session.program
        targets = [(branch.rel, session.script, program.source),
                   *((rel, Path(branch.root) / rel, branch.read(rel)) for rel in modules)]
        home = session.relative(diag.file) if diag.via == API_PREFLIGHT else ""
        if home and home != branch.rel:  # the API check located it in a module: there
            targets = [t for t in targets if t[0] == home]
        first_reason = ""
        prechecked = True
        for rel, path, source in targets:
            rc = RecipeContext(diagnosis=cause_diag,
                               versions={**session.versions, **probe.versions},
                               trainers=tuple(probe.trainers), script=path,
                               datasets=tuple(probe.datasets), keras=tuple(probe.keras),
                               args=tuple(session.o.args), facts=probe.facts)
            outcome = apply_recipe(recipe, source, rc)
            if isinstance(outcome, RecipeCrashed):
                log = save_traceback(outcome.traceback or outcome.error, f"recipe-{recipe.id}")
                session.result.warnings.append(f"{outcome.reason} (a bug in autofix; "
                                               f"traceback saved to {log})")
                return outcome
            if not isinstance(outcome, Applied):
                first_reason = first_reason or outcome.reason
                prechecked = prechecked and outcome.precheck
                continue
            kept = self.try_candidates(recipe, source, rc, outcome, rel, diag, run)
            if isinstance(kept, str):  # several candidates, none passed its run
                first_reason, prechecked = first_reason or kept, False
                continue
            try:
                fix = self.commit(recipe, cause, cause_diag, diag, run, number, rel, kept)
            except CellsLost as exc:  # never commit a notebook with merged cells
                first_reason = first_reason or str(exc)
                prechecked = False
                if kept.verified is not None:  # its run stays a trial of the candidate
                    session.finished(session.record(kept.verified.run, kept.verified.verdict),
                                     kept.verified.verdict)
                continue
            return _Committed(fix, kept.verified)
        if len(targets) > 1:
            first_reason += f" (also tried {', '.join(rel for rel, _, _ in targets[1:])})"
        return NotApplicable(first_reason, recipe.id, precheck=prechecked)

    def commit(self, recipe: type[Recipe], cause: str, cause_diag: Diagnosis, diag: Diagnosis,
               run: RunResult, number: int, rel: str, kept: _Kept) -> FixRecord:
        """Commit ``kept``'s source to ``rel`` on the branch, with the message of a fix of
        ``cause_diag`` (the diagnosis ``diag`` of run ``number``); returns its record.
        Raises :class:`CellsLost` for a notebook whose cells the edit would merge."""
        session, branch = self.session, self.session.branch
        outcome, script = kept.outcome, rel == branch.rel
        where = session.document.where(session.program, diag.line) \
            if script and diag.line and diag.file in ("", str(session.script)) else ""
        if recipe.category != cause and not recipe.shared_operator:  # a root cause
            cause_diag = dataclasses.replace(cause_diag, category=recipe.category,
                                             via=diag.via or cause)
        rank = f"{run.probe.rank} of {session.o.nproc_per_node}" \
            if run.probe.rank is not None else ""  # a distributed launch: which rank failed
        message = commit_message(recipe, outcome, cause_diag, number,
                                 session.relative(diag.file) or branch.rel, where, rank,
                                 tried=kept.tried)
        before = branch.read(rel)
        content = session.document.content(before, outcome.source) if script \
            else outcome.source
        sha = branch.commit_fix(content, message, rel)
        after = branch.read(rel)
        line = outcome.line or (diag.line if script else 0)
        return FixRecord(cause_diag.category, recipe.id, sha, rel, line, outcome.summary,
                         number, diff=unified_diff(before, after, rel),
                         evidence=cause_diag.evidence,
                         candidates=tuple(CandidateRecord(t.label, t.run_n, t.passed)
                                          for t in kept.trials))

    def try_candidates(self, recipe: type[Recipe], source: str, rc: RecipeContext,
                       first: Applied, rel: str, diag: Diagnosis, run: RunResult
                       ) -> _Kept | str:
        """Several candidate fixes of ``recipe`` for ``rel`` (:mod:`autofix.loop.candidates`):
        each run in rank order, uncommitted, until one passes the proof the fix owes
        (:meth:`FixGroup.failed_by` against ``diag``, the diagnosis of ``run``). Returns
        the kept candidate with the commit's paragraph on what was tried and its run (the
        verifying run of its fix), or why none passed. One way only: ``first`` as it is,
        nothing tried."""
        options = candidates(recipe, source, rc, first)
        if len(options) < 2:
            return _Kept(first, "")
        session = self.session
        before = session.sources()
        key = str(session.script) if rel == session.branch.rel \
            else str(Path(session.branch.root) / rel)
        trials: list[Trial] = []
        for k, outcome in enumerate(options, 1):
            label = label_of(outcome)
            after = {**before, key: outcome.source}
            judged = session.judged_run(
                f"candidate {k} of {len(options)} for {diag.category}: {label}",
                candidate=(rel, outcome.source))
            record = FixRecord(recipe.category, recipe.id, "", rel, outcome.line,
                               outcome.summary, judged.n)
            failure = FixGroup(diag, run, judged.n, [record], before, after,
                               {recipe.id}).failed_by(judged.run, judged.verdict)
            trials.append(Trial(label, outcome, judged.n,
                                verdict_text(judged.run, judged.verdict), failure))
            if not failure:
                return _Kept(outcome, trials_text(trials), tuple(trials),
                             Verified(judged.run, judged.verdict, after, judged.n))
            rec = session.record(judged.run, judged.verdict)
            rec.recipe = f"{recipe.id} candidate {k}"  # tried, no commit: "not kept"
            session.finished(rec, judged.verdict)
        return (f"{recipe.id}: none of its {len(trials)} candidates passed its run ("
                + "; ".join(f"{t.label}: {t.failure}" for t in trials) + ")")

    def joining(self, run: RunResult, first: Diagnosis) -> list[Diagnosis]:
        """The preflight findings of ``run`` (issue 10) other than ``first``, one per
        category that has recipes, in the order the checks ran; the faults that raise
        nothing it found (a loss on logits); then, unless ``--one-at-a-time``, the faults
        read from the current source (``Category.source_diagnoses``: a hand loop's
        evaluation, which a run stopped by ``first`` never reaches). They join ``first``'s
        fix group, proved by the same verifying run."""
        session = self.session
        seen = {first.category}
        found = []
        for _, exc in run.probe.preflight:
            verdict = session.judge_preflight(run, exc)
            if verdict is None or verdict.category in seen \
                    or not session.recipes(verdict.category):
                continue
            seen.add(verdict.category)
            found.append(verdict)  # its details name the check that found it (diagnose)
        for fault in run.probe.faults:  # faults that raise nothing (a loss on logits)
            if fault.category not in seen and session.recipes(fault.category):
                seen.add(fault.category)
                found.append(fault_diagnosis(fault, run.probe))
        if not session.o.one_at_a_time:  # a hand loop's evaluation, which runs after training
            for static in source_diagnoses(session.program.source):
                if static.category not in seen and session.recipes(static.category):
                    seen.add(static.category)
                    found.append(static)
        return found

    def contracts(self, fixes: tuple[FixRecord, ...]) -> frozenset[str]:
        """The categories that break the contracts ``fixes`` claim to restore
        (``Recipe.restores``)."""
        return frozenset(c for f in fixes for r in self.session.recipes(f.category)
                         if r.id == f.recipe for c in r.restores)


def unified_diff(before: str, after: str, rel: str) -> str:
    """The unified diff (``git diff`` style, 3 lines of context) of ``rel`` from ``before``
    to ``after``."""
    return "".join(difflib.unified_diff(before.splitlines(keepends=True),
                                        after.splitlines(keepends=True),
                                        f"a/{rel}", f"b/{rel}"))
