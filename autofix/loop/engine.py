"""The repair loop: run, diagnose, apply a recipe, commit, run again.

``repair(script, settings, ...)`` is the API the CLI (and batch mode) drive; it returns a
:class:`SessionResult` and raises :class:`AutofixError` only for usage or environment
problems (bad path, not a repo, bad ``--python``, a git failure...).

The loop only sequences decisions made elsewhere, over an immutable :class:`State` (the
fixes the next run judges, a kept candidate's run, the next run's note, the trials whose
recipes found nothing, whether the API check's answer is still to be taken), one
:meth:`Loop.step` per run: :class:`~autofix.loop.session.Session` runs and judges
(``Healthy | Diagnosis``), a category's data says whether it needs a rerun first
(``Category.rerun_env``), :class:`~autofix.loop.attempt.Fixer` applies and commits
(``Fixed | NoRecipe | NotApplicable | RecipeCrashed``), :class:`~autofix.loop.drift.
DriftCheck` fixes API drift before run 1, and :class:`autofix.loop.fixgroups.FixGroup` says
whether the run after a fix shows it moved the script forward. The runner and the recipe
lookup are parameters, so ``tests/test_engine.py`` replays saved runs through every policy.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from autofix.categories import all_categories, get_category, is_category
from autofix.loop.api_check import api_diagnoses
from autofix.loop.attempt import Fixed, Fixer, Verified
from autofix.loop.drift import DriftCheck, Timing
from autofix.loop.fixgroups import FixGroup
from autofix.loop.session import (
    ApiCheck,
    Judged,
    NullObserver,
    Observer,
    Parts,
    RecipeLookup,
    Runner,
    Session,
    Verdict,
    VersionLookup,
    check_script,
    default_branch,
)
from autofix.loop.verdicts import FINDING, advisory, healthy_evidence, run_findings
from autofix.run.runner import run_script, target_versions
from autofix.run.warm import WarmInterpreter
from autofix.settings import Settings
from autofix.toolkit.discovery import recipes_for
from autofix.types import (
    Diagnosis,
    DroppedFix,
    Healthy,
    NoRecipe,
    RunOutcome,
    RunRecord,
    RunResult,
    SessionResult,
    Status,
)
from autofix.vcs.writers import BranchWriter
from autofix.words import NOTHING_TRAINED, plural


@dataclass(frozen=True)
class State:
    """What the loop carries from one run to the next."""

    #: The fixes the next run judges (``None``: none yet).
    last: FixGroup | None = None
    #: A kept candidate's run: the verifying run of its fix, taken instead of a new run.
    verified: Verified | None = None
    #: The note the next run is shown with.
    note: str = ""
    #: Trial categories whose recipes found nothing to change in the source.
    declined: frozenset[str] = frozenset()
    #: When the API check's answer is still to be taken.
    api: Timing = Timing.NONE


#: One step's outcome: the state for the next run, or the session's end.
Step = State | SessionResult


class Loop:
    """The loop of one session over its :class:`State` (module docstring)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.fixer = Fixer(session)
        self.drift = DriftCheck(session, self.fixer)

    def run(self) -> SessionResult:
        """Step from the first run (the API check started) until the session ends."""
        step: Step = State(api=self.drift.start())
        while isinstance(step, State):
            step = self.step(step)
        return step

    def step(self, state: State) -> Step:
        """One run and what follows from it: the API check's fixes, the verdict on the
        last fixes (dropped, and the next recipe tried, when it fails them), a healthy run
        verified on all the data, a trial, or the next fixes."""
        session = self.session
        if state.api is Timing.FIRST:  # answered before run 1: run 1 never restarts
            drift = self.drift.fixes()
            if drift is None:
                return dataclasses.replace(state, api=Timing.NONE)
            return dataclasses.replace(
                state, api=Timing.NONE, last=drift.group, verified=drift.verified,
                note=f"the API check found drift, {plural(len(drift.group.fixes), 'fix')} "
                     "committed before the first run")
        first_n, stopped = session.n + 1, False
        judged: Judged | SessionResult | None = self.take_verified(state)
        note = state.note if judged is not None else ""  # a new run is shown with it
        try:
            judged = judged or self.judged_with_rerun(state.note)
        except KeyboardInterrupt:
            if state.api is not Timing.ALONGSIDE or not self.drift.stopped_run:
                raise
            judged, stopped = None, True  # run 1 stopped: the API check found drift
        alongside = state.api is Timing.ALONGSIDE  # run 1 ran the source as given
        state = dataclasses.replace(state, note=note, verified=None, api=Timing.NONE)
        if alongside:  # drift fixes come first
            drift = self.drift.fixes()
            if drift is not None or stopped:  # run 1 ran the drifted source: not counted
                session.forget_runs_from(first_n)
                return dataclasses.replace(
                    state, last=drift.group if drift else None,
                    verified=drift.verified if drift else None,
                    note=f"restarted: the API check found drift, "
                         f"{plural(len(drift.group.fixes), 'fix')} committed before the "
                         "first run" if drift is not None else
                         "restarted: the API check found drift that no recipe fixes")
        if not isinstance(judged, Judged):
            return session.result  # the session ended (a rerun that did not reproduce)
        return self.judge_fixes(state, judged)

    def judge_fixes(self, state: State, judged: Judged) -> Step:
        """The run ``judged`` against the last fixes: when it fails them they are dropped
        and the next recipe tried (a trial that failed ends the session as it stood);
        else a healthy run on sampled data is verified on all of it, and the rest is
        :meth:`fix`'s."""
        session, last = self.session, state.last
        run, verdict = judged.run, judged.verdict
        rec = session.record(run, verdict)
        failure = last.failed_by(run, verdict) if last is not None else ""
        if last is not None and failure:
            session.finished(rec, verdict)
            shas = self.drop(last, failure)
            if last.tentative:  # a trial that did not prove itself: end as it stood
                n = len(last.fixes)
                return self.end_healthy(last.run, f"; {failure}, so "
                                                  f"{plural(n, 'commit')} {shas} "
                                                  f"{'was' if n == 1 else 'were'} dropped")
            return self.retry(state, last, failure, shas)
        if isinstance(verdict, Healthy) and session.sampling and run.probe.sampled:
            session.finished(rec, verdict)  # healthy on cut data: verify on all of it
            session.verify_on_full_data()
            return dataclasses.replace(
                state, note=f"verifying on the full data (diagnosis runs used "
                            f"{session.o.sample_rows} rows per split)")
        return self.fix(state, run, verdict, rec)

    def fix(self, state: State, run: RunResult, verdict: Verdict, rec: RunRecord) -> Step:
        """Fix what ``run`` (judged ``verdict``, recorded as ``rec``) shows: its diagnosis,
        or for a healthy run a trial (the next trial when one's recipes find nothing to
        change), with the preflight findings that join it; the fixes are the group the
        next run judges. Ends the session on a healthy run with no trial, at
        ``--max-iterations``, or when nothing applies."""
        session, fixer = self.session, self.fixer
        declined = state.declined
        trial = self.trial(declined, run, verdict)
        if isinstance(verdict, Healthy) and trial is None:
            session.finished(rec, verdict)
            return self.end_healthy(run)
        diag = trial or verdict
        assert isinstance(diag, Diagnosis)
        rec.category, rec.evidence = diag.category, diag.evidence  # a trial's verdict
        if fixer.attempts >= session.o.max_iterations:
            session.finished(rec, diag)
            return session.finish(Status.GAVE_UP, f"stopped after --max-iterations "
                                                  f"{session.o.max_iterations}", diag)
        before = session.sources()
        outcome = fixer.apply(run, diag)
        while not isinstance(outcome, Fixed) and trial is not None:
            declined |= {trial.category}  # nothing in the source to change (no lr to lower)
            trial = self.trial(declined, run, verdict)  # the next candidate
            if trial is None:
                rec.category, rec.evidence = "", healthy_evidence(run)  # healthy as it is
                session.finished(rec, verdict)
                return self.end_healthy(run)
            diag = trial
            rec.category, rec.evidence = diag.category, diag.evidence
            outcome = fixer.apply(run, diag)
        if not isinstance(outcome, Fixed):
            session.finished(rec, diag)
            return session.finish(Status.GAVE_UP,
                                  self.drift.declined_before(diag, outcome.reason), diag)
        extra: list[Diagnosis] = []
        for finding in fixer.joining(run, diag):  # preflight: every fault it saw
            more = fixer.apply(run, finding)
            if isinstance(more, Fixed):
                outcome = outcome.then(more)
                extra.append(finding)
        fixes = outcome.fixes
        rec.recipe = ", ".join(f.recipe for f in fixes)
        rec.commit, rec.commits = fixes[-1].commit, [f.commit for f in fixes]
        session.finished(rec, diag)
        group = FixGroup(diag, run, session.n, list(fixes), before, session.sources(),
                         {f.recipe for f in fixes}, extra=extra, tentative=trial is not None,
                         contracts=fixer.contracts(fixes))
        return dataclasses.replace(state, last=group, verified=outcome.verified,
                                   declined=declined)

    def judged_with_rerun(self, note: str) -> Judged | SessionResult:
        """The next run and its verdict. A category that needs a rerun before it is trusted
        (``Category.rerun_env``: the CUDA assert on CPU) gets it here; the session ends
        when the rerun does not reproduce the failure."""
        session = self.session
        judged = session.judged_run(note)
        verdict = judged.verdict
        if not isinstance(verdict, Diagnosis) or not is_category(verdict.category):
            return judged
        category = get_category(verdict.category)
        if not category.rerun_env:
            return judged
        session.finished(session.record(judged.run, verdict), verdict)
        again = session.judged_run(category.rerun_note, dict(category.rerun_env))
        if isinstance(again.verdict, Healthy):
            session.finished(session.record(again.run, again.verdict), again.verdict)
            return session.finish(Status.GAVE_UP,
                                  f"the {verdict.category} failure does not reproduce on the "
                                  f"rerun ({category.rerun_note}); no trustworthy traceback "
                                  "to classify", verdict)
        return dataclasses.replace(again, verdict=dataclasses.replace(again.verdict,
                                                                       via=verdict.category))

    def take_verified(self, state: State) -> Judged | None:
        """The run of the candidate kept last, as the verifying run of its fix, when the
        branch holds exactly what that run ran and no run came after it (``None``
        otherwise: another fix joined the group, and the run is recorded as the
        candidate's trial)."""
        kept, session = state.verified, self.session
        if kept is None:
            return None
        if kept.n == session.n and kept.sources == session.sources():
            return Judged(kept.run, kept.verdict, kept.n)
        session.finished(session.record(kept.run, kept.verdict), kept.verdict)
        return None

    def trial(self, declined: frozenset[str], run: RunResult, verdict: Verdict
              ) -> Diagnosis | None:
        """The trial diagnosis a category proposes for a healthy run (``Category.trial``:
        ``lr-too-high`` for a run not clearly learning at a learning rate of 1e-3 or more,
        or learning at an update ratio far above fine-tuning's), then a run finding whose
        kind has a recipe; once per category and session (one whose recipes found nothing
        to change, in ``declined``, is not proposed again) and within
        ``--max-iterations``; ``None`` otherwise."""
        session = self.session
        if not isinstance(verdict, Healthy) or self.fixer.attempts >= session.o.max_iterations:
            return None
        tried = {f.category for f in session.result.fixes} | \
            {d.category for d in session.result.dropped} | declined
        for category in all_categories():  # a category that proposes a trial fix
            if category.trial is not None and category.id not in tried:
                found = category.trial(run)
                if found is not None and found.category not in tried:
                    return found
        for finding in run_findings(run):  # a finding with a recipe
            if finding.kind not in tried and session.recipes(finding.kind):
                return Diagnosis(category=finding.kind, evidence=finding.evidence,
                                 via=FINDING)
        return None

    def end_healthy(self, run: RunResult, note: str = "") -> SessionResult:
        """End the session on ``run``, which trained without a fault: ``fixed`` when fixes
        are on the branch, else ``clean``; the run's findings (learning-slowly...) are
        reported; ``note`` says what else happened (a trial dropped)."""
        session = self.session
        result = session.result
        result.findings = run_findings(run)
        result.trained = bool(run.probe.steps)
        fixes = plural(len(result.fixes), "fix")
        if result.fixes and result.trained:
            return session.finish(Status.FIXED, f"the script trains after {fixes}{note}")
        if result.fixes:
            return session.finish(Status.FIXED, f"after {fixes} the script runs to its end "
                                                f"without an error, but {NOTHING_TRAINED}, so "
                                                f"autofix could not check that it trains{note}")
        faults = [f.kind for f in result.findings if not advisory(f.kind)]
        if faults:  # a fault's finding left standing is never "clean"
            kinds = ", ".join(dict.fromkeys(faults))
            why = "no fix for it proved itself" if any(session.recipes(k) for k in faults) \
                else "advice: no recipe makes this change"
            return session.finish(Status.FINDINGS, f"the script runs without an error, but "
                                                   f"trains wrongly: {kinds} ({why}){note}")
        if result.trained:
            return session.finish(Status.CLEAN, f"the script ran without a fault; nothing to "
                                                f"fix{note}")
        return session.finish(Status.CLEAN, f"the script ran to its end without an error, but "
                                            f"{NOTHING_TRAINED}: nothing to fix, and training "
                                            f"was not checked{note}")

    def retry(self, state: State, group: FixGroup, failure: str, shas: str) -> Step:
        """After ``group`` was dropped: the next recipes for the same diagnosis (those
        not tried yet, in ``recipes_for`` order); the session ends when none applies or
        the iteration budget is spent."""
        session, fixer = self.session, self.fixer
        dropped = f"{failure}; {plural(len(group.fixes), 'commit')} {shas} dropped from " \
                  "the branch"
        if fixer.attempts >= session.o.max_iterations:
            return session.finish(Status.GAVE_UP, f"{dropped}; stopped after --max-iterations "
                                                  f"{session.o.max_iterations}", group.diagnosis)
        before = session.sources()
        outcome = fixer.apply(group.run, group.diagnosis, exclude=group.tried,
                              run_n=group.run_n)
        if not isinstance(outcome, Fixed):
            why = "no other recipe for it" if isinstance(outcome, NoRecipe) else outcome.reason
            return session.finish(Status.GAVE_UP, f"{dropped}; {why}", group.diagnosis)
        fixes = outcome.fixes
        return dataclasses.replace(state, verified=outcome.verified, last=FixGroup(
            group.diagnosis, group.run, group.run_n, list(fixes), before, session.sources(),
            group.tried | {f.recipe for f in fixes}, contracts=fixer.contracts(fixes)))

    def drop(self, group: FixGroup, reason: str) -> str:
        """Remove ``group``'s commits from the branch and the result; returns their shas."""
        result = self.session.result
        for fix in reversed(group.fixes):
            result.fixes.remove(fix)
            self.session.branch.drop_last()
            result.dropped.append(DroppedFix(fix.commit, fix.recipe, fix.category, reason))
        return ", ".join(f.commit[:8] for f in group.fixes)


def repair(script: Path | str, settings: Settings | None = None, *,
           observer: Observer | None = None, cancel: threading.Event | None = None,
           writer: BranchWriter | None = None, base: str | None = None,
           runner: Runner = run_script, recipes: RecipeLookup = recipes_for,
           api_check: ApiCheck = api_diagnoses,
           versions: VersionLookup = target_versions) -> SessionResult:
    """Repair ``script`` on its branch until it trains or autofix gives up.

    ``settings`` are the user's options (default: the CLI's defaults). The collaborators:
    ``observer`` gets progress; ``cancel`` stops the running child when set (batch mode's
    Ctrl-C); ``writer`` receives the fixes instead of a git branch (a Ray task, a
    sandboxed session: the driver replays them with :func:`autofix.vcs.writers.replay`);
    ``base`` is the commit to branch from (batch mode: one HEAD for all); ``runner`` runs
    one program (default: a real child process); ``recipes`` gives the recipes for a
    category id (default: the registry); ``api_check`` and ``versions`` ask the target
    interpreter. Returns the :class:`SessionResult` (``interrupted`` set after Ctrl-C,
    with the child killed and the branch as of the last completed commit). Raises
    :class:`AutofixError` for usage and environment errors (before the first run, or a git
    failure during one).
    """
    settings = settings or Settings()
    warm = WarmInterpreter(settings) if runner is run_script and \
        WarmInterpreter.applies(settings, Path(script)) else None
    if warm is not None:
        warm.start()  # its imports overlap the session's set-up
    parts = Parts(observer or NullObserver(), cancel, writer, base, runner, recipes,
                  api_check, versions, warm)
    started = time.monotonic()
    try:
        session = Session(Path(script), settings, parts)
    except BaseException:
        if warm is not None:
            warm.close()
        raise
    try:
        return Loop(session).run()
    except KeyboardInterrupt:
        session.result.interrupted = True
        if session.n and all(r.n != session.n for r in session.result.runs):
            session.result.runs.append(RunRecord(  # the run Ctrl-C cut short
                n=session.n, outcome=RunOutcome.INTERRUPTED.value, category="",
                evidence="interrupted by the user", seconds=0.0,
                max_steps=settings.max_steps, note=session.note))
        return session.finish(Status.ERROR, "interrupted by the user; the branch holds the "
                                            "fixes committed so far")
    finally:
        session.result.base, session.result.diff_stat = session.branch.diff_stat()
        session.branch.close()
        if warm is not None:
            warm.close()
        session.result.seconds = time.monotonic() - started


__all__ = ["ApiCheck", "NullObserver", "Observer", "RecipeLookup", "Runner", "VersionLookup",
           "check_script", "default_branch", "repair"]
