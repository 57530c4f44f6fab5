"""The repair loop: run, diagnose, apply a recipe, commit, run again.

``repair(script, settings, ...)`` is the API the CLI (and batch mode) drive; it returns a
:class:`SessionResult` and raises :class:`AutofixError` only for usage or environment
problems (bad path, not a repo, bad ``--python``, a git failure...).

The loop only sequences decisions made elsewhere: :func:`autofix.loop.verdicts.judge` says
``Healthy | Diagnosis`` for a run, a category's data says whether it needs a rerun first
(``Category.rerun_env``), :func:`autofix.toolkit.recipe.apply_recipe` returns ``Applied |
NotApplicable | RecipeCrashed``, and :class:`autofix.loop.fixgroups.FixGroup` says whether the run
after a fix shows it moved the script forward. The runner and the recipe lookup are
parameters, so ``tests/test_engine.py`` replays saved runs through every policy.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from autofix.categories import UNKNOWN, Place, all_categories, get_category, is_category
from autofix.categories.proofs import chance_of
from autofix.errors import AutofixError, save_traceback
from autofix.loop.api_check import api_diagnoses
from autofix.loop.candidates import Trial, candidates, label_of, trials_text, verdict_text
from autofix.loop.fixgroups import FixGroup, symptom_of
from autofix.loop.messages import commit_message
from autofix.loop.verdicts import (
    FINDING,
    advisory,
    fault_diagnosis,
    healthy_evidence,
    judge,
    run_findings,
    source_diagnoses,
    source_findings,
)
from autofix.paths import relative_paths
from autofix.run.child.contract import Env
from autofix.run.programs import (
    CellsLost,
    Program,
    document_for,
    local_modules,
    parse_problem,
)
from autofix.run.runner import RunSpec, run_script, target_versions
from autofix.run.warm import WarmInterpreter
from autofix.settings import Settings
from autofix.toolkit.apply import apply_recipe
from autofix.toolkit.discovery import recipes_for
from autofix.toolkit.recipe import Recipe
from autofix.types import (
    Applied,
    CandidateRecord,
    Diagnosis,
    DroppedFix,
    Finding,
    FixRecord,
    Healthy,
    NoRecipe,
    NotApplicable,
    ProbeReport,
    RecipeContext,
    RecipeCrashed,
    RunOutcome,
    RunRecord,
    RunResult,
    SessionResult,
    Status,
)
from autofix.vcs.repo import open_repo, prepare_branch, repo_root
from autofix.vcs.tree import require_clean
from autofix.vcs.writers import BranchWriter
from autofix.words import NOTHING_TRAINED, plural

#: Runs one program: ``runner(spec, source, on_line, on_step) -> RunResult`` (default
#: :func:`autofix.run.runner.run_script`; tests replay saved results). ``on_line`` gets
#: each output line, ``on_step(step, loss)`` each optimizer step the probe records.
Runner = Callable[[RunSpec, str, Callable[[str], None] | None,
                   Callable[[int, float | None, int], None] | None], RunResult]
#: The recipes for a category id, in the order to try them (default
#: :func:`autofix.toolkit.discovery.recipes_for`).
RecipeLookup = Callable[[str], tuple[type[Recipe], ...]]
#: The API drift check before run 1: ``api_check(source, python, versions, modules=,
#: folder=)`` gives the diagnoses the installed library would raise for the script and
#: its own modules (path -> source, beside it in ``folder``) (default
#: :func:`autofix.loop.api_check.api_diagnoses`, one import of the library in the target
#: interpreter; replayed tests pass one that answers at once).
ApiCheck = Callable[..., list[Diagnosis]]
#: The target interpreter's versions (default :func:`autofix.run.runner.target_versions`).
VersionLookup = Callable[[str], dict[str, str]]
#: The run that stands for "no run yet" (the API check's findings before run 1).
_NOTHING = RunResult(RunOutcome.OK, None, 0.0, "", 0, ProbeReport())
#: What applying recipes for one diagnosis gave: the committed fixes, or why none.
ApplyDecision = list[FixRecord] | NoRecipe | NotApplicable | RecipeCrashed


class Observer(Protocol):
    """Receives progress (the CLI renders it with rich; tests may record it)."""

    def run_started(self, n: int, note: str) -> None: ...

    def output_line(self, line: str) -> None: ...

    def run_finished(self, record: RunRecord, diagnosis: Diagnosis | None) -> None: ...

    def step(self, n: int, loss: float | None, total: int = 0) -> None: ...


class NullObserver:
    """An observer that ignores everything."""

    def run_started(self, n: int, note: str) -> None:
        pass

    def output_line(self, line: str) -> None:
        pass

    def run_finished(self, record: RunRecord, diagnosis: Diagnosis | None) -> None:
        pass

    def step(self, n: int, loss: float | None, total: int = 0) -> None:
        pass


def check_script(path: Path) -> Path:
    """The absolute, resolved path of a runnable Python script.

    Raises :class:`AutofixError` (exit 2, before any run) for a missing path, a
    directory, a file that is not Python source (not ``.py``/``.ipynb``, not UTF-8 text,
    not a readable notebook), or one whose program does not parse (:func:`parse_problem`).
    """
    if not path.exists():
        raise AutofixError(f"{path}: no such file")
    if path.is_dir():
        raise AutofixError(f"{path} is a directory", hint="give the training script's path")
    if path.suffix not in (".py", ".ipynb"):
        raise AutofixError(f"{path} is not a Python script (.py) or notebook (.ipynb)",
                           hint="autofix repairs Python training scripts and notebooks")
    try:
        text = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError) as exc:
        raise AutofixError(f"{path} cannot be read as UTF-8 text: {exc}") from None
    document = document_for(path)
    try:
        program = document.program(text)
    except Exception as exc:  # nbformat raises several kinds for a broken notebook
        raise AutofixError(f"{path} is not a readable Jupyter notebook: {exc}") from None
    problem = parse_problem(program.source)
    if problem is not None:
        line, column, message = problem
        where = document.where(program, line)
        shown = path.resolve()
        with contextlib.suppress(ValueError):  # named from the folder autofix runs in
            shown = shown.relative_to(Path.cwd().resolve())
        raise AutofixError(f"{shown}, {where}" + (f", column {column}" if column else "")
                           + f": the script does not parse: {message} (nothing was run)")
    return path.resolve()



def default_branch(script: Path) -> str:
    """``autofix/<script stem>``, the branch used when ``--branch`` is not given; characters
    git refuses in branch names (spaces, ``..``, ``~^:?*[\\``, a ``.lock`` end) become ``-``."""
    stem = re.sub(r"[^A-Za-z0-9._-]+|\.\.+", "-", script.stem).strip(".-")
    stem = re.sub(r"\.lock$", "-lock", stem)
    return f"autofix/{stem or 'script'}"


@dataclass(frozen=True)
class _Parts:
    """The collaborators of one session (see :func:`repair`)."""

    observer: Observer
    cancel: threading.Event | None
    writer: BranchWriter | None
    base: str | None
    runner: Runner
    recipes: RecipeLookup
    api_check: ApiCheck
    versions: VersionLookup
    #: The session's warm interpreter (``None``: every run cold; a replaying runner).
    warm: WarmInterpreter | None = None


class _Session:
    def __init__(self, script: Path, settings: Settings, parts: _Parts) -> None:
        self.o = settings
        self.observer = parts.observer
        self.cancel = parts.cancel
        self.runner = parts.runner
        self.api_check = parts.api_check
        self.warm = parts.warm
        self.recipes: RecipeLookup = lambda category: tuple(
            r for r in parts.recipes(category) if settings.allows(r.id))  # --only / --skip
        self.script = check_script(script)
        self.versions = parts.versions(settings.python)
        self.branch: BranchWriter
        if parts.writer is not None:
            self.branch = parts.writer
        else:
            repo = open_repo(self.script, init=settings.init)
            if settings.clean_tree:
                try:
                    rel = self.script.relative_to(repo_root(repo)).as_posix()
                except ValueError:  # outside the work tree: prepare_branch says so
                    rel = self.script.name
                require_clean(repo, [rel])
            self.branch = prepare_branch(
                repo, self.script, settings.branch or default_branch(self.script),
                settings.resume, base=parts.base, dry_run=settings.dry_run)
        self.result = SessionResult(Status.ERROR, self.branch.branch, "not run",
                                    versions=dict(self.versions), dry_run=settings.dry_run,
                                    earlier_fixes=len(self.branch.autofix_commits()))
        self.n = 0
        self.note = ""
        self.next_note = ""  # the note of the next run when the loop starts it
        self.sampling = settings.sample_rows > 0
        self.attempts = 0
        #: Trial categories whose recipes found nothing to change in the source.
        self.declined_trials: set[str] = set()
        self.document = document_for(self.script)
        #: Set when the API check running alongside run 1 found drift: run 1 is stopped.
        self.drift_found = threading.Event()
        #: What the API check found that has no edit (a stale override), reported at the end.
        self.api_findings: list[Finding] = []
        #: Why the recipes declined each API-check finding (its message -> the reason):
        #: said again when the run then raises that error, whose traceback alone tells less.
        self.api_declined: dict[str, str] = {}
        #: The API check answered before run 1 (a fork of the warm interpreter).
        self.api_first = False
        #: The run of the candidate fix just kept (:meth:`try_candidates`), the verifying
        #: run of its fix (:meth:`take_pending`).
        self.pending: _Pending | None = None

    @property
    def program(self) -> Program:
        """The Python program the branch's current file stands for."""
        return self.document.program(self.branch.source)

    def run(self, note: str = "", env: dict[str, str] | None = None,
            candidate: tuple[str, str] | None = None) -> RunResult:
        """The next run of the branch's program; ``candidate`` (``(rel, source)``: the
        script's program or one of the user's modules as a candidate fix would make it)
        runs in place of the branch's version, uncommitted."""
        self.n += 1
        note, self.next_note = note or self.next_note, ""
        self.note = note
        self.observer.run_started(self.n, note)
        files = dict(self.branch.files)
        program = self.program
        source = program.source
        if candidate is not None and candidate[0] == self.branch.rel:
            source = candidate[1]
        elif candidate is not None:
            files[candidate[0]] = candidate[1]
        spec = RunSpec(self.script, self.o, env={**self.checks(), **(env or {})},
                       cancel=_Either(self.drift_found, self.cancel), warm=self.warm,
                       modules={str(Path(self.branch.root) / rel): text
                                for rel, text in files.items()})
        self.result.skipped = program.skipped
        result = self.runner(spec, source, self.observer.output_line, self.observer.step)
        if result.probe.exception is None:  # silent faults the source shows (a hand loop's)
            result.probe.findings += source_findings(source)
        self.result.warnings += [f"run {self.n}: a probe failed inside the script's process "
                                 f"({e}); its facts are missing" for e in result.probe.probe_errors]
        if result.teardown:
            self.result.warnings.append(f"run {self.n}: {result.teardown}")
        return result

    def checks(self) -> dict[str, str]:
        """The child's preflight and sampling switches for the next run (issue 10)."""
        return {Env.PREFLIGHT: "0" if self.o.one_at_a_time else "1",
                Env.SAMPLE_ROWS: str(self.o.sample_rows if self.sampling else 0),
                Env.REPO_ROOT: self.branch.root}

    def sources(self) -> dict[str, str]:
        """What the branch holds now, absolute path -> text: the script's program, then the
        user's modules a fix edited (what a fix group is judged against)."""
        root = Path(self.branch.root)
        return {str(self.script): self.program.source,
                **{str(root / rel): text for rel, text in self.branch.files.items()}}

    def record(self, run: RunResult, verdict: Healthy | Diagnosis) -> RunRecord:
        diag = verdict if isinstance(verdict, Diagnosis) else None
        level = chance_of(run.probe)
        rec = RunRecord(n=self.n, outcome=run.outcome.value,
                        category=diag.category if diag else "",
                        evidence=diag.evidence if diag else healthy_evidence(run),
                        seconds=run.seconds,
                        steps=[(st.step, st.loss) for st in run.probe.steps],
                        num_classes=run.probe.num_classes,
                        chance=level.value if level else None,
                        chance_label=level.label if level else "",
                        symptom_step=run.probe.symptom.step if run.probe.symptom else 0,
                        max_steps=self.o.max_steps, note=self.note)
        if run.probe.evaluations:
            rec.eval_step, rec.metrics = run.probe.evaluations[-1]
        rec.phases, rec.total_steps = list(run.probe.phases), run.probe.total_steps
        self.result.runs.append(rec)
        return rec

    def finished(self, rec: RunRecord, verdict: Healthy | Diagnosis) -> None:
        self.observer.run_finished(rec, verdict if isinstance(verdict, Diagnosis) else None)

    def finish(self, status: Status, reason: str, diag: Diagnosis | None = None) -> SessionResult:
        self.result.findings = [*self.api_findings, *(f for f in self.result.findings
                                                      if f not in self.api_findings)]
        self.result.status = status
        self.result.reason = reason
        self.result.last_diagnosis = diag
        return self.result

    def judge(self, run: RunResult) -> Healthy | Diagnosis:
        """:func:`autofix.loop.verdicts.judge`, with paths made relative (no machine paths in
        commits and reports) and a missing file named with the folder it was looked up
        from."""
        found = judge(run, self.script, self.branch.root)
        if not isinstance(found, Diagnosis):
            return found
        root = self.branch.root
        category = get_category(found.category) if is_category(found.category) else None
        if category is not None and category.explain is not None:
            found = category.explain(found, Place(self.o.cwd, root))
        return dataclasses.replace(
            found, evidence=relative_paths(found.evidence, root),
            details=tuple(relative_paths(d, root) for d in found.details))

    def run_and_judge(self) -> tuple[RunResult, Healthy | Diagnosis] | None:
        """One run and its verdict. A category that needs a rerun before it is trusted
        (``Category.rerun_env``: the CUDA assert on CPU) gets it here; ``None`` when the
        rerun does not reproduce the failure (the session is then finished)."""
        run = self.run()
        verdict = self.judge(run)
        if not isinstance(verdict, Diagnosis) or not is_category(verdict.category):
            return run, verdict
        category = get_category(verdict.category)
        if not category.rerun_env:
            return run, verdict
        self.finished(self.record(run, verdict), verdict)
        first = verdict
        run = self.run(category.rerun_note, dict(category.rerun_env))
        verdict = self.judge(run)
        if isinstance(verdict, Healthy):
            self.finished(self.record(run, verdict), verdict)
            self.finish(Status.GAVE_UP, f"the {first.category} failure does not reproduce "
                                        f"on the rerun ({category.rerun_note}); no trustworthy "
                                        "traceback to classify", first)
            return None
        return run, dataclasses.replace(verdict, via=first.category)

    def start_api_check(self) -> list[list[Diagnosis]] | None:
        """Start the API drift check (:func:`api_diagnoses`, one import of the library in
        the target interpreter) in a thread, alongside run 1: most scripts have no drift,
        and then run 1 has not waited for it. Returns the list the thread appends its
        diagnoses to (``None``: no check, with ``--one-at-a-time`` or ``--resume``); on
        drift the thread sets :attr:`drift_found`, which stops run 1. With a warm
        interpreter the check is a fork of it (the libraries already imported: a second or
        two) and answers before run 1 starts (:attr:`api_first`), so drift never restarts
        run 1."""
        if self.o.one_at_a_time or self.o.resume:
            return None
        tool = self.warm.tool if self.warm is not None and self.warm.serves() else None
        extra = {"tool": tool} if tool is not None else {}
        source = self.program.source
        root = Path(self.branch.root)
        modules = {str(root / rel): self.branch.read(rel) for rel in self.modules(_NOTHING)}
        box: list[list[Diagnosis]] = []

        def check() -> None:
            try:
                found = self.api_check(source, self.o.python, self.versions,
                                       modules=modules, folder=self.script.parent, **extra)
            except Exception:  # noqa: BLE001 - a check that cannot run blocks nothing
                found = []
            box.append(found)
            if any(self.recipes(d.category) for d in found):  # drift with a fix: stop run 1
                self.drift_found.set()

        thread = threading.Thread(target=check, name="autofix-api-check", daemon=True)
        thread.start()
        self.api_thread = thread
        if tool is not None:
            thread.join()
            self.api_first = True
        return box

    def api_verdict(self, box: list[list[Diagnosis]]) -> FixGroup | None:
        """Wait for the API check started by :meth:`start_api_check`; apply its fixes."""
        self.api_thread.join()
        return self.preflight_api(box[0] if box else [])

    def preflight_api(self, diags: list[Diagnosis]) -> FixGroup | None:
        """Fix the API drift found before the first run (no training run needed): the
        script's imports and keyword arguments checked against the installed library."""
        before = self.sources()
        nothing = _NOTHING
        fixes: list[FixRecord] = []
        applied: list[Diagnosis] = []
        for diag in diags:
            if not self.recipes(diag.category):  # no edit for it (a stale override): said
                where = self.relative(diag.file) or self.branch.rel
                self.api_findings.append(Finding(diag.category, 0, f"{diag.evidence} "
                                                 f"({where}:{diag.line})"))
                continue
            decision = self.apply(nothing, diag, run_n=0)
            if isinstance(decision, list):
                fixes += decision
                applied.append(diag)
            else:
                self.api_declined[diag.evidence] = decision.reason
        if not fixes:
            return None
        return FixGroup(applied[0], nothing, 0, fixes, before, self.sources(),
                        {f.recipe for f in fixes}, extra=applied[1:])

    def declined_before(self, diag: Diagnosis, reason: str) -> str:
        """``reason``, or for an error the API check found before the first run and whose
        recipes declined then (with its facts: which class takes the keyword, what the
        configuration already sets), that decline's reason."""
        return next((why for message, why in self.api_declined.items()
                     if message and message in diag.evidence), reason)

    def findings(self, run: RunResult, first: Diagnosis) -> list[Diagnosis]:
        """The preflight findings of ``run`` (issue 10) other than ``first``, one per
        category that has recipes, in the order the checks ran; then a label metric given
        raw logits, read from the current source (``Category.source_diagnoses``: a hand
        loop's evaluation runs after training, which a run stopped by ``first`` never
        reaches). They join ``first``'s fix group, proved by the same verifying run."""
        seen = {first.category}
        found = []
        for _, exc in run.probe.preflight:
            verdict = self.judge(dataclasses.replace(
                run, probe=dataclasses.replace(run.probe, exception=exc, symptom=None)))
            if not isinstance(verdict, Diagnosis) or verdict.category in seen \
                    or not self.recipes(verdict.category):
                continue
            seen.add(verdict.category)
            found.append(verdict)  # its details name the check that found it (diagnose)
        for fault in run.probe.faults:  # faults that raise nothing (a loss on logits)
            if fault.category not in seen and self.recipes(fault.category):
                seen.add(fault.category)
                found.append(fault_diagnosis(fault, run.probe))
        if not self.o.one_at_a_time:  # a hand loop's evaluation, which runs after training
            for static in source_diagnoses(self.program.source):
                if static.category not in seen and self.recipes(static.category):
                    seen.add(static.category)
                    found.append(static)
        return found

    def loop(self) -> SessionResult:
        last: FixGroup | None = None
        box = self.start_api_check()
        while True:
            if box is not None and self.api_first:  # answered before run 1: no restart
                group, box = self.api_verdict(box), None
                self.drift_found.clear()
                if group is not None:
                    self.next_note = (f"the API check found drift, "
                                      f"{plural(len(group.fixes), 'fix')} committed before "
                                      "the first run")
                    last = group
                continue
            first_n, stopped = self.n + 1, False
            try:
                judged = self.take_pending() or self.run_and_judge()
            except KeyboardInterrupt:
                if box is None or not self.drift_found.is_set() or (
                        self.cancel is not None and self.cancel.is_set()):
                    raise
                judged, stopped = None, True  # run 1 stopped: the API check found drift
            if box is not None:  # run 1 ran the source as given: drift fixes come first
                group, box = self.api_verdict(box), None
                self.drift_found.clear()
                if group is not None or stopped:  # not counted: it ran the drifted source
                    self.result.runs = [r for r in self.result.runs if r.n < first_n]
                    self.n = first_n - 1
                    self.next_note = (
                        f"restarted: the API check found drift, {plural(len(group.fixes), 'fix')}"
                        " committed before the first run" if group is not None else
                        "restarted: the API check found drift that no recipe fixes")
                    last = group
                    continue
            if judged is None:
                return self.result
            run, verdict = judged
            rec = self.record(run, verdict)
            failure = last.failed_by(run, verdict) if last is not None else ""
            if last is not None and failure:
                self.finished(rec, verdict)
                shas = self.drop(last, failure)
                if last.tentative:  # a trial that did not prove itself: end as it stood
                    n = len(last.fixes)
                    return self.end_healthy(last.run, f"; {failure}, so "
                                                      f"{plural(n, 'commit')} {shas} "
                                                      f"{'was' if n == 1 else 'were'} dropped")
                retried = self.retry(last, failure, shas)
                if retried is None:
                    return self.result
                last = retried
                continue
            if isinstance(verdict, Healthy) and self.sampling and run.probe.sampled:
                self.finished(rec, verdict)  # healthy on cut data: verify on all of it
                self.sampling = False
                self.next_note = (f"verifying on the full data (diagnosis runs used "
                                  f"{self.o.sample_rows} rows per split)")
                continue
            trial = self.trial(run, verdict)
            if isinstance(verdict, Healthy) and trial is None:
                self.finished(rec, verdict)
                return self.end_healthy(run)
            diag = trial or verdict
            assert isinstance(diag, Diagnosis)
            rec.category, rec.evidence = diag.category, diag.evidence  # a trial's verdict
            if self.attempts >= self.o.max_iterations:
                self.finished(rec, diag)
                return self.finish(Status.GAVE_UP, f"stopped after --max-iterations "
                                                   f"{self.o.max_iterations}", diag)
            before = self.sources()
            decision = self.apply(run, diag)
            while not isinstance(decision, list) and trial is not None:
                self.declined_trials.add(trial.category)  # nothing in the source to change
                trial = self.trial(run, verdict)  # (no lr to lower): the next candidate
                if trial is None:
                    rec.category, rec.evidence = "", healthy_evidence(run)  # healthy as
                    self.finished(rec, verdict)  # it is
                    return self.end_healthy(run)
                diag = trial
                rec.category, rec.evidence = diag.category, diag.evidence
                decision = self.apply(run, diag)
            if not isinstance(decision, list):
                self.finished(rec, diag)
                return self.finish(Status.GAVE_UP, self.declined_before(diag, decision.reason),
                                   diag)
            extra: list[Diagnosis] = []
            for finding in self.findings(run, diag):  # preflight: every fault it saw
                more = self.apply(run, finding)
                if isinstance(more, list):
                    decision += more
                    extra.append(finding)
            rec.recipe = ", ".join(f.recipe for f in decision)
            rec.commit, rec.commits = decision[-1].commit, [f.commit for f in decision]
            self.finished(rec, diag)
            last = FixGroup(diag, run, self.n, decision, before, self.sources(),
                            {f.recipe for f in decision}, extra=extra,
                            tentative=trial is not None, contracts=self.contracts(decision))

    def trial(self, run: RunResult, verdict: Healthy | Diagnosis) -> Diagnosis | None:
        """The trial diagnosis a category proposes for a healthy run (``Category.trial``:
        ``lr-too-high`` for a run not clearly learning at a learning rate of 1e-3 or more,
        or learning at an update ratio far above fine-tuning's), then a run finding whose
        kind has a recipe; once per category and session (one whose recipes found nothing
        to change is not proposed again) and within ``--max-iterations``; ``None``
        otherwise."""
        if not isinstance(verdict, Healthy) or self.attempts >= self.o.max_iterations:
            return None
        tried = {f.category for f in self.result.fixes} | \
            {d.category for d in self.result.dropped} | self.declined_trials
        for category in all_categories():  # a category that proposes a trial fix
            if category.trial is not None and category.id not in tried:
                found = category.trial(run)
                if found is not None and found.category not in tried:
                    return found
        for finding in run_findings(run):  # a finding with a recipe
            if finding.kind not in tried and self.recipes(finding.kind):
                return Diagnosis(category=finding.kind, evidence=finding.evidence,
                                 via=FINDING)
        return None

    def end_healthy(self, run: RunResult, note: str = "") -> SessionResult:
        """End the session on ``run``, which trained without a fault: ``fixed`` when fixes
        are on the branch, else ``clean``; the run's findings (learning-slowly...) are
        reported; ``note`` says what else happened (a trial dropped)."""
        self.result.findings = run_findings(run)
        self.result.trained = bool(run.probe.steps)
        fixes = plural(len(self.result.fixes), "fix")
        if self.result.fixes and self.result.trained:
            return self.finish(Status.FIXED, f"the script trains after {fixes}{note}")
        if self.result.fixes:
            return self.finish(Status.FIXED, f"after {fixes} the script runs to its end "
                                             f"without an error, but {NOTHING_TRAINED}, so "
                                             f"autofix could not check that it trains{note}")
        faults = [f.kind for f in self.result.findings if not advisory(f.kind)]
        if faults:  # a fault's finding left standing is never "clean"
            kinds = ", ".join(dict.fromkeys(faults))
            why = "no fix for it proved itself" if any(self.recipes(k) for k in faults) \
                else "advice: no recipe makes this change"
            return self.finish(Status.FINDINGS, f"the script runs without an error, but "
                                                f"trains wrongly: {kinds} ({why}){note}")
        if self.result.trained:
            return self.finish(Status.CLEAN, f"the script ran without a fault; nothing to "
                                             f"fix{note}")
        return self.finish(Status.CLEAN, f"the script ran to its end without an error, but "
                                         f"{NOTHING_TRAINED}: nothing to fix, and training was "
                                         f"not checked{note}")

    def retry(self, group: FixGroup, failure: str, shas: str) -> FixGroup | None:
        """After ``group`` was dropped: the next recipes for the same diagnosis (those
        not tried yet, in ``recipes_for`` order); ``None`` when none applies or the
        iteration budget is spent (the session is then finished)."""
        dropped = f"{failure}; {plural(len(group.fixes), 'commit')} {shas} dropped from " \
                  "the branch"
        if self.attempts >= self.o.max_iterations:
            self.finish(Status.GAVE_UP, f"{dropped}; stopped after --max-iterations "
                                        f"{self.o.max_iterations}", group.diagnosis)
            return None
        before = self.sources()
        decision = self.apply(group.run, group.diagnosis, exclude=group.tried, run_n=group.run_n)
        if not isinstance(decision, list):
            why = "no other recipe for it" if isinstance(decision, NoRecipe) else decision.reason
            self.finish(Status.GAVE_UP, f"{dropped}; {why}", group.diagnosis)
            return None
        return FixGroup(group.diagnosis, group.run, group.run_n, decision, before,
                        self.sources(), group.tried | {f.recipe for f in decision},
                        contracts=self.contracts(decision))

    def contracts(self, fixes: list[FixRecord]) -> frozenset[str]:
        """The categories that break the contracts ``fixes`` claim to restore
        (``Recipe.restores``)."""
        return frozenset(c for f in fixes for r in self.recipes(f.category) if r.id == f.recipe
                         for c in r.restores)

    def drop(self, group: FixGroup, reason: str) -> str:
        """Remove ``group``'s commits from the branch and the result; returns their shas."""
        for fix in reversed(group.fixes):
            self.result.fixes.remove(fix)
            self.branch.drop_last()
            self.result.dropped.append(DroppedFix(fix.commit, fix.recipe, fix.category, reason))
        return ", ".join(f.commit[:8] for f in group.fixes)

    def apply(self, run: RunResult, diag: Diagnosis, exclude: set[str] | frozenset[str] = (
            frozenset()), run_n: int | None = None) -> ApplyDecision:
        """Apply the first applicable recipe for each cause of ``diag`` (skipping the ids
        in ``exclude``), one commit each. Returns the fixes, or why there is none:
        :class:`NoRecipe`, :class:`NotApplicable` (every recipe declined) or
        :class:`RecipeCrashed` (the last crash, when no recipe applied and one crashed).
        A crashing recipe is reported in ``warnings`` and the next one is tried. When the
        symptom's causes are alternatives (``Category.alternatives``: a diverging loss) only
        the first cause whose recipe applies is fixed."""
        number = self.n if run_n is None else run_n  # 0: found before any run
        causes = diag.causes or (diag.category,)
        candidates = {c: [r for r in self.recipes(c) if r.id not in exclude] for c in causes}
        if not any(candidates.values()):
            why = get_category(diag.category).no_recipe if is_category(diag.category) \
                else "no recipe for it"
            return NoRecipe(diag.category, f"{diag.category}: {why}")
        fixes: list[FixRecord] = []
        reasons: list[str] = []
        prechecks: list[str] = []  # "the script never mentions ...": said only when alone
        crash: RecipeCrashed | None = None
        modules = self.modules(run)
        symptom = symptom_of(diag)  # causes that are alternatives: the first that applies
        alternatives = bool(symptom) and get_category(symptom).alternatives
        for cause in causes:
            if fixes and alternatives:
                break
            cause_diag = dataclasses.replace(diag, category=cause)
            for recipe in candidates[cause]:
                fix, declined = self.apply_one(recipe, cause, cause_diag, diag, run, number,
                                               modules)
                if isinstance(declined, RecipeCrashed):
                    crash = declined
                    reasons.append(f"{recipe.id}: crashed")
                    continue
                if fix is None:
                    assert isinstance(declined, NotApplicable)
                    (prechecks if declined.precheck else reasons).append(
                        f"{recipe.id}: {declined.reason}")
                    continue
                self.result.fixes.append(fix)
                fixes.append(fix)
                break
        self.attempts += 1
        if fixes:
            return fixes
        tried = "; ".join(reasons or prechecks)
        if crash is not None and all(r.endswith(": crashed") for r in reasons):
            return crash
        if diag.category == UNKNOWN.id:
            return NotApplicable(f"unknown: autofix has no category for this failure "
                                 f"(tried {tried})")
        return NotApplicable(f"{diag.category}: recipe not applicable ({tried})")

    def modules(self, run: RunResult) -> list[str]:
        """The user's own modules a recipe may edit after the script (POSIX paths in the
        repository): those in the failure's frames, innermost first, then those the script
        imports (:func:`autofix.run.programs.local_modules`); the script, notebooks,
        environments and files outside the repository are never among them."""
        root = Path(self.branch.root).resolve()
        exc = run.probe.exception
        files = [Path(f.file) for e in ((exc, *exc.chain) if exc else ())
                 for f in reversed(e.frames)]
        files += local_modules(self.program.source, self.script.parent)
        found: dict[str, None] = {}
        for path in files:
            path = path if path.is_absolute() else self.o.cwd / path
            try:
                rel = path.resolve().relative_to(root).as_posix()
            except (ValueError, OSError):
                continue
            if rel == self.branch.rel or not rel.endswith(".py") or not path.is_file() \
                    or any(part.startswith(".") or part in ("site-packages", "node_modules")
                           for part in rel.split("/")[:-1]):
                continue
            found[rel] = None
        return list(found)

    def apply_one(self, recipe: type[Recipe], cause: str, cause_diag: Diagnosis,
                  diag: Diagnosis, run: RunResult, number: int, modules: list[str]
                  ) -> tuple[FixRecord | None, NotApplicable | RecipeCrashed | None]:
        """Try ``recipe`` on the script, then on each of the user's ``modules``; commit the
        first edit it makes. Returns the fix, or ``None`` and why (the script's reason; a
        ``precheck`` one when every file was declined by the recipe's pre-check), or the
        crash (reported in ``warnings``)."""
        probe = run.probe
        program = self.program
        targets = [(self.branch.rel, self.script, program.source),
                   *((rel, Path(self.branch.root) / rel, self.branch.read(rel))
                     for rel in modules)]
        home = self.relative(diag.file) if diag.via == "api-preflight" else ""
        if home and home != self.branch.rel:  # the API check located it in a module: there
            targets = [t for t in targets if t[0] == home]
        first_reason = ""
        prechecked = True
        for rel, path, source in targets:
            rc = RecipeContext(diagnosis=cause_diag, versions={**self.versions, **probe.versions},
                               trainers=tuple(probe.trainers), script=path,
                               datasets=tuple(probe.datasets), keras=tuple(probe.keras),
                               args=tuple(self.o.args), facts=probe.facts)
            outcome = apply_recipe(recipe, source, rc)
            if isinstance(outcome, RecipeCrashed):
                log = save_traceback(outcome.traceback or outcome.error, f"recipe-{recipe.id}")
                self.result.warnings.append(f"{outcome.reason} (a bug in autofix; traceback "
                                            f"saved to {log})")
                return None, outcome
            if not isinstance(outcome, Applied):
                first_reason = first_reason or outcome.reason
                prechecked = prechecked and outcome.precheck
                continue
            picked, tried, trials = self.try_candidates(recipe, source, rc, outcome, rel, diag,
                                                        run)
            if picked is None:  # several candidates, none passed its run
                first_reason, prechecked = first_reason or tried, False
                continue
            outcome = picked
            script = rel == self.branch.rel
            where = self.document.where(program, diag.line) \
                if script and diag.line and diag.file in ("", str(self.script)) else ""
            if recipe.category != cause and not recipe.shared_operator:  # a root cause
                cause_diag = dataclasses.replace(cause_diag, category=recipe.category,
                                                 via=diag.via or cause)
            rank = f"{probe.rank} of {self.o.nproc_per_node}" if probe.rank is not None \
                else ""  # a distributed launch: which rank failed first
            message = commit_message(recipe, outcome, cause_diag, number,
                                     self.relative(diag.file) or self.branch.rel, where, rank,
                                     tried=tried)
            before = self.branch.read(rel)
            try:
                content = self.document.content(before, outcome.source) if script \
                    else outcome.source
            except CellsLost as exc:  # never commit a notebook with merged cells
                first_reason = first_reason or str(exc)
                prechecked = False
                continue
            sha = self.branch.commit_fix(content, message, rel)
            after = self.branch.read(rel)
            line = outcome.line or (diag.line if script else 0)
            return FixRecord(cause_diag.category, recipe.id, sha, rel, line, outcome.summary,
                             number, diff=unified_diff(before, after, rel),
                             evidence=cause_diag.evidence,
                             candidates=tuple(CandidateRecord(t.label, t.run_n, t.passed)
                                              for t in trials)), None
        if len(targets) > 1:
            first_reason += f" (also tried {', '.join(rel for rel, _, _ in targets[1:])})"
        return None, NotApplicable(first_reason, recipe.id, precheck=prechecked)

    def try_candidates(self, recipe: type[Recipe], source: str, rc: RecipeContext,
                       first: Applied, rel: str, diag: Diagnosis, run: RunResult
                       ) -> tuple[Applied | None, str, list[Trial]]:
        """Several candidate fixes of ``recipe`` for ``rel`` (:mod:`autofix.loop.candidates`):
        each run in rank order, uncommitted, until one passes the proof the fix owes
        (:meth:`FixGroup.failed_by` against ``diag``, the diagnosis of ``run``). Returns
        the kept candidate and the commit's paragraph on what was tried (its run is kept
        as the verifying run: :meth:`take_pending`), or ``None`` and why none passed; and
        the trials. One way only: ``first`` as it is, nothing tried."""
        options = candidates(recipe, source, rc, first)
        if len(options) < 2:
            return first, "", []
        before = self.sources()
        key = str(self.script) if rel == self.branch.rel else str(Path(self.branch.root) / rel)
        trials: list[Trial] = []
        for k, outcome in enumerate(options, 1):
            label = label_of(outcome)
            after = {**before, key: outcome.source}
            tried = self.run(f"candidate {k} of {len(options)} for {diag.category}: {label}",
                             candidate=(rel, outcome.source))
            verdict = self.judge(tried)
            record = FixRecord(recipe.category, recipe.id, "", rel, outcome.line,
                               outcome.summary, self.n)
            failure = FixGroup(diag, run, self.n, [record], before, after,
                               {recipe.id}).failed_by(tried, verdict)
            trials.append(Trial(label, outcome, self.n, verdict_text(tried, verdict), failure))
            if not failure:
                self.pending = _Pending(tried, verdict, after, self.n)
                return outcome, trials_text(trials), trials
            rec = self.record(tried, verdict)
            rec.recipe = f"{recipe.id} candidate {k}"  # tried, no commit: "not kept"
            self.finished(rec, verdict)
        return None, (f"{recipe.id}: none of its {len(trials)} candidates passed its run ("
                      + "; ".join(f"{t.label}: {t.failure}" for t in trials) + ")"), trials

    def take_pending(self) -> tuple[RunResult, Healthy | Diagnosis] | None:
        """The run of the candidate just kept, as the verifying run of its fix, when the
        branch holds exactly what that run ran (``None`` otherwise: another fix joined the
        group, and the run is recorded as the candidate's trial)."""
        pending, self.pending = self.pending, None
        if pending is None:
            return None
        if pending.n == self.n and pending.sources == self.sources():
            return pending.run, pending.verdict
        self.finished(self.record(pending.run, pending.verdict), pending.verdict)
        return None

    def relative(self, file: str) -> str:
        """``file`` (a path the child reported) relative to the repository ("" outside)."""
        if not file:
            return ""
        try:
            return Path(file).resolve().relative_to(Path(self.branch.root).resolve()).as_posix()
        except (ValueError, OSError):
            return ""


@dataclass(frozen=True)
class _Pending:
    """A kept candidate's run, its verdict, the sources it ran and its number."""

    run: RunResult
    verdict: Healthy | Diagnosis
    sources: dict[str, str]
    n: int


class _Either(threading.Event):
    """Set when any of ``events`` is (``None`` entries ignored): the runner's ``cancel``."""

    def __init__(self, *events: threading.Event | None) -> None:
        super().__init__()
        self.events = [e for e in events if e is not None]

    def is_set(self) -> bool:
        return super().is_set() or any(e.is_set() for e in self.events)


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
    parts = _Parts(observer or NullObserver(), cancel, writer, base, runner, recipes,
                   api_check, versions, warm)
    started = time.monotonic()
    try:
        session = _Session(Path(script), settings, parts)
    except BaseException:
        if warm is not None:
            warm.close()
        raise
    try:
        return session.loop()
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


def unified_diff(before: str, after: str, rel: str) -> str:
    """The unified diff (``git diff`` style, 3 lines of context) of ``rel`` from ``before``
    to ``after``."""
    return "".join(difflib.unified_diff(before.splitlines(keepends=True),
                                        after.splitlines(keepends=True),
                                        f"a/{rel}", f"b/{rel}"))


__all__ = ["ApiCheck", "NullObserver", "Observer", "RecipeLookup", "Runner", "VersionLookup",
           "check_script", "default_branch", "repair"]
