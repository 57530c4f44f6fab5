"""The repair loop: run, diagnose, apply a recipe, commit, run again.

``repair(options, observer)`` is the API the CLI (and batch mode) drive; it returns a
:class:`SessionResult` and raises :class:`AutofixError` only for usage or environment
problems found before the first run (bad path, not a repo, bad ``--python``...).
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from autofix.categories import SYMPTOMS
from autofix.child.symptoms import WINDOW, LossMonitor
from autofix.diagnosis import diagnose, diagnose_symptom
from autofix.documents import Program, document_for
from autofix.errors import AutofixError
from autofix.gitops import FixBranch, open_repo, prepare_branch
from autofix.probe import losses_finite
from autofix.recipe import Recipe, apply_recipe
from autofix.registry import recipes_for
from autofix.runner import RunSpec, default_python, run_script, target_versions
from autofix.types import (
    Diagnosis,
    FixRecord,
    RecipeContext,
    RecipeOutcome,
    RecipeStatus,
    RunOutcome,
    RunRecord,
    RunResult,
    SessionResult,
    Status,
)

#: Environment for the CPU rerun of a CUDA device-side error (course, chapter 8: "execute
#: the next steps of the training pipeline on the CPU"; CUDA_LAUNCH_BLOCKING=1 makes CUDA
#: report synchronously where a GPU is still visible).
CPU_RERUN_ENV = {"CUDA_VISIBLE_DEVICES": "", "CUDA_LAUNCH_BLOCKING": "1"}


@dataclass
class Options:
    """What the user asked for; defaults match the CLI's."""

    script: Path
    python: str = field(default_factory=default_python)
    args: Sequence[str] = ()
    branch: str | None = None
    cwd: Path = field(default_factory=Path.cwd)
    timeout: float | None = 600.0
    max_steps: int = 60
    max_iterations: int = 8
    resume: bool = False
    init: bool = False
    base: str | None = None  # commit to branch from (batch mode: one HEAD for all)
    cancel: threading.Event | None = None
    env: dict[str, str] = field(default_factory=dict)  # extra environment for every run


class Observer(Protocol):
    """Receives progress (the CLI renders it with rich; tests may record it)."""

    def run_started(self, n: int, note: str) -> None: ...

    def output_line(self, line: str) -> None: ...

    def run_finished(self, record: RunRecord, diagnosis: Diagnosis | None) -> None: ...


class NullObserver:
    """An observer that ignores everything."""

    def run_started(self, n: int, note: str) -> None:
        pass

    def output_line(self, line: str) -> None:
        pass

    def run_finished(self, record: RunRecord, diagnosis: Diagnosis | None) -> None:
        pass


def check_script(path: Path) -> Path:
    """The absolute, resolved path of a runnable Python script.

    Raises :class:`AutofixError` for a missing path, a directory, or a file that is not
    Python source (not ``.py``, or not UTF-8 text).
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
    if path.suffix == ".ipynb":
        try:
            document_for(path).program(text)
        except Exception as exc:  # nbformat raises several kinds for a broken notebook
            raise AutofixError(f"{path} is not a readable Jupyter notebook: {exc}") from None
    return path.resolve()


def default_branch(script: Path) -> str:
    """``autofix/<script stem>``, the branch used when ``--branch`` is not given; characters
    git refuses in branch names (spaces, ``..``, ``~^:?*[\\``, a ``.lock`` end) become ``-``."""
    stem = re.sub(r"[^A-Za-z0-9._-]+|\.\.+", "-", script.stem).strip(".-")
    stem = re.sub(r"\.lock$", "-lock", stem)
    return f"autofix/{stem or 'script'}"


def commit_message(recipe: type[Recipe], outcome: RecipeOutcome, diag: Diagnosis, run_n: int,
                   rel: str, place: str = "") -> str:
    """The fix commit's message: subject, evidence, recipe summary and trailers.

    ``place`` names the failing line for a person (``"cell 3, line 2"`` in a notebook).
    """
    where = f"{rel}:{diag.line}" if diag.line else rel
    if place and not place.startswith("line "):
        where = f"{rel}, {place}"
    symptom = symptom_of(diag)
    happened = f"showed {symptom}" if symptom else "failed with"
    lines = [f"autofix: {recipe.title}", "", f"Run {run_n} {happened}:", f"    {diag.evidence}"]
    if not symptom:
        lines.append(f"at {where}" + (f": {diag.line_text.strip()}" if diag.line_text else ""))
    if diag.via == "cuda-device-assert":
        lines.append(f"(found by rerunning on CPU after {diag.via}: the GPU error pointed at "
                     "the wrong line)")
    if diag.details:
        header = "Training evidence:" if symptom else "Key traceback lines:"
        lines += ["", header, *(f"    {d}" for d in diag.details)]
    lines += ["", f"Change: {outcome.summary}", "",
              f"Autofix-Category: {diag.category}", f"Autofix-Recipe: {recipe.id}"]
    if diag.via:
        lines.append(f"Autofix-Via: {diag.via}")
    return "\n".join(lines) + "\n"


class _Session:
    def __init__(self, options: Options, observer: Observer) -> None:
        self.o = options
        self.observer = observer
        self.script = check_script(options.script)
        self.versions = target_versions(options.python)
        repo = open_repo(self.script, init=options.init)
        self.branch: FixBranch = prepare_branch(
            repo, self.script, options.branch or default_branch(self.script), options.resume,
            base=options.base)
        self.result = SessionResult(Status.ERROR, self.branch.branch, "not run")
        self.n = 0
        self.document = document_for(self.script)

    @property
    def program(self) -> Program:
        """The Python program the branch's current file stands for."""
        return self.document.program(self.branch.source)

    def run(self, note: str = "", env: dict[str, str] | None = None) -> RunResult:
        self.n += 1
        self.observer.run_started(self.n, note)
        spec = RunSpec(python=self.o.python, script=self.script, cwd=self.o.cwd,
                       args=self.o.args, timeout=self.o.timeout, max_steps=self.o.max_steps,
                       env={**self.o.env, **(env or {})}, cancel=self.o.cancel)
        program = self.program
        self.result.skipped = program.skipped
        return run_script(spec, program.source, self.observer.output_line)

    def record(self, run: RunResult, diag: Diagnosis | None) -> RunRecord:
        rec = RunRecord(n=self.n, outcome=run.outcome.value,
                        category=diag.category if diag else "",
                        evidence=diag.evidence if diag else healthy_evidence(run),
                        seconds=run.seconds)
        self.result.runs.append(rec)
        return rec

    def finish(self, status: Status, reason: str, diag: Diagnosis | None = None) -> None:
        self.result.status = status
        self.result.reason = reason
        self.result.last_diagnosis = diag

    def loop(self) -> SessionResult:
        last: _FixGroup | None = None
        attempts = 0
        while True:
            run = self.run()
            healthy = run.outcome in (RunOutcome.OK, RunOutcome.BUDGET) \
                and run.probe.symptom is None and losses_finite(run.probe)
            diag = None if healthy else self.diagnose(run)
            if diag is not None and diag.category == "cuda-device-assert":
                self.observer.run_finished(self.record(run, diag), diag)
                run = self.run("rerun on CPU with CUDA_VISIBLE_DEVICES=\"\" "
                               "CUDA_LAUNCH_BLOCKING=1", CPU_RERUN_ENV)
                if run.outcome in (RunOutcome.OK, RunOutcome.BUDGET):
                    self.observer.run_finished(self.record(run, None), None)
                    self.finish(Status.GAVE_UP, "the CUDA error does not reproduce on CPU; "
                                "no trustworthy traceback to classify", diag)
                    return self.result
                diag = dataclasses.replace(self.diagnose(run), via=diag.category)
            rec = self.record(run, diag)
            failure = last.failed_by(run, diag) if last is not None else ""
            if failure:
                assert last is not None
                self.observer.run_finished(rec, diag)
                dropped = self.drop(last)
                self.finish(Status.GAVE_UP, f"{failure}; commit(s) {dropped} dropped from the "
                                            "branch", diag)
                return self.result
            if diag is None:
                self.observer.run_finished(rec, None)
                if self.result.fixes:
                    self.finish(Status.FIXED, f"the script trains after "
                                              f"{len(self.result.fixes)} fix(es)")
                else:
                    self.finish(Status.CLEAN, "the script ran without a fault; nothing to fix")
                return self.result
            if attempts >= self.o.max_iterations:
                self.observer.run_finished(rec, diag)
                self.finish(Status.GAVE_UP, f"stopped after --max-iterations "
                                            f"{self.o.max_iterations}", diag)
                return self.result
            attempts += 1
            fixes = self.apply(run, diag)
            if not fixes:
                self.observer.run_finished(rec, diag)
                return self.result
            rec.recipe = ", ".join(f.recipe for f in fixes)
            rec.commit = fixes[-1].commit
            self.observer.run_finished(rec, diag)
            last = _FixGroup(diag, fixes)

    def diagnose(self, run: RunResult) -> Diagnosis:
        return diagnose_symptom(run) or diagnose(run, self.script)

    def drop(self, group: _FixGroup) -> str:
        """Remove ``group``'s commits from the branch and the result; returns their shas."""
        for _ in group.fixes:
            self.result.fixes.pop()
            self.branch.drop_last()
        return ", ".join(f.commit[:8] for f in group.fixes)

    def apply(self, run: RunResult, diag: Diagnosis) -> list[FixRecord]:
        """Apply a recipe for each cause of ``diag``, one commit each; empty when none
        applies (the session is then finished with the reason)."""
        causes = diag.causes or (diag.category,)
        why = {"unknown": "autofix has no category for this failure",
               "timeout": "the script ran past --timeout",
               "syntax-error": "the script does not parse"}.get(diag.category, "no recipe for it")
        if not any(recipes_for(c) for c in causes):
            self.finish(Status.GAVE_UP, f"{diag.category}: {why}", diag)
            return []
        probe = run.probe
        fixes, reasons = [], []
        program = self.program
        for cause in causes:
            cause_diag = dataclasses.replace(diag, category=cause)
            rc = RecipeContext(diagnosis=cause_diag, versions={**self.versions, **probe.versions},
                               trainers=tuple(probe.trainers), script=self.script,
                               datasets=tuple(probe.datasets), keras=tuple(probe.keras),
                               args=tuple(self.o.args))
            for recipe in recipes_for(cause):
                outcome = apply_recipe(recipe, program.source, rc)
                if outcome.status is not RecipeStatus.APPLIED:
                    reasons.append(f"{recipe.id}: {outcome.reason}")
                    continue
                where = self.document.where(program, diag.line) if diag.line else ""
                if recipe.category != cause:  # a root cause behind another face
                    cause_diag = dataclasses.replace(cause_diag, category=recipe.category,
                                                     via=diag.via or cause)
                sha = self.branch.commit_fix(
                    self.document.content(self.branch.source, outcome.source),
                    commit_message(recipe, outcome, cause_diag, self.n, self.branch.rel, where))
                program = self.program
                fix = FixRecord(recipe.category, recipe.id, sha, self.branch.rel,
                                outcome.line or diag.line, outcome.summary, self.n)
                self.result.fixes.append(fix)
                fixes.append(fix)
                break
        if not fixes:
            tried = "; ".join(reasons)
            self.finish(Status.GAVE_UP, f"{diag.category}: {why} (tried {tried})"
                        if diag.category == "unknown"
                        else f"{diag.category}: recipe not applicable ({tried})", diag)
        return fixes


@dataclass
class _FixGroup:
    """The fixes made for one diagnosis, judged by the next run."""

    diagnosis: Diagnosis
    fixes: list[FixRecord]

    @property
    def symptom(self) -> str:
        return symptom_of(self.diagnosis)

    def failed_by(self, run: RunResult, diag: Diagnosis | None) -> str:
        """Why the next run shows these fixes did not help ("" when they may have).

        An error fix fails when the same error comes back at the same place. A symptom fix
        must prove itself: the same symptom again fails it, and so does a healthy run whose
        loss is not clearly under the chance level (``LossMonitor.clearly_learning``).
        """
        recipes = ", ".join(f.recipe for f in self.fixes)
        if diag is not None and diag.same_fault(self.diagnosis):
            return (f"recipe {recipes} did not fix {self.diagnosis.category}: the same error "
                    "at the same place after its fix")
        if not self.symptom:
            return ""
        if diag is not None and symptom_of(diag) == self.symptom:
            return f"recipe {recipes} did not help: {self.symptom} again ({diag.evidence})"
        if diag is None:
            monitor = LossMonitor(run.probe.num_classes,
                                  [s.loss for s in run.probe.steps if s.loss is not None])
            if not monitor.clearly_learning():
                return (f"recipe {recipes} did not help: the loss did not get clearly under "
                        f"the chance level within the budget (last {WINDOW} steps: "
                        f"{monitor.window_mean():.3f}, {len(monitor.losses)} steps)")
        return ""


def healthy_evidence(run: RunResult) -> str:
    """What a run without a fault showed: its step count and losses, else its last line."""
    losses = [s.loss for s in run.probe.steps if s.loss is not None]
    if not losses:
        return run.last_line[:200]
    tail = losses[-WINDOW:]
    return (f"{len(run.probe.steps)} steps, loss {losses[0]:.3f} at step 1, "
            f"{sum(tail) / len(tail):.3f} over the last {len(tail)} steps")


def symptom_of(diag: Diagnosis) -> str:
    """The training symptom behind ``diag`` (``nan-loss``/``stalled-loss``), or ""."""
    ids = {c.id for c in SYMPTOMS}
    return diag.via if diag.via in ids else (diag.category if diag.category in ids else "")


def repair(options: Options, observer: Observer | None = None) -> SessionResult:
    """Repair ``options.script`` on its branch until it trains or autofix gives up.

    Returns the :class:`SessionResult` (``interrupted`` set after Ctrl-C, with the child
    killed and the branch as of the last completed commit). Raises :class:`AutofixError`
    for usage/environment errors found before the first run.
    """
    session = _Session(options, observer or NullObserver())
    try:
        return session.loop()
    except KeyboardInterrupt:
        session.result.interrupted = True
        session.finish(Status.ERROR, "interrupted by the user; the branch holds the fixes "
                                     "committed so far")
        return session.result
