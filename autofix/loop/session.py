"""One session's world: the script, its branch, its runs and what they are judged as.

:class:`Session` holds what a session does with the outside world and keeps while it
lasts: the collaborators (:class:`Parts`: the runner, the recipe lookup, the API check, the
observer), the branch the fixes go to, the running :class:`~autofix.types.SessionResult`
and the run counter. It runs the branch's program (:meth:`Session.judged_run`, the one
place a run is judged) and judges a preflight finding (:meth:`Session.judge_preflight`);
what to do with a verdict is decided by the loop (:mod:`autofix.loop.engine`), with fixes
applied by :mod:`autofix.loop.attempt` and the API check of :mod:`autofix.loop.drift`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from autofix.categories import Place, get_category, is_category
from autofix.categories.proofs import chance_of
from autofix.errors import AutofixError
from autofix.loop.verdicts import healthy_evidence, judge, judge_preflight, source_findings
from autofix.paths import relative_paths
from autofix.run.child.contract import Env
from autofix.run.programs import Program, document_for, local_modules, parse_problem
from autofix.run.runner import RunSpec
from autofix.run.warm import WarmInterpreter
from autofix.settings import Settings
from autofix.toolkit.recipe import Recipe
from autofix.types import (
    Diagnosis,
    ExceptionInfo,
    Finding,
    Healthy,
    RunRecord,
    RunResult,
    SessionResult,
    Status,
)
from autofix.vcs.repo import open_repo, prepare_branch, repo_root
from autofix.vcs.tree import require_clean
from autofix.vcs.writers import BranchWriter

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
#: A run's verdict.
Verdict = Healthy | Diagnosis


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


@dataclass(frozen=True)
class Parts:
    """The collaborators of one session (see :func:`autofix.loop.engine.repair`)."""

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


@dataclass(frozen=True)
class Judged:
    """A run and its verdict, and the run's number."""

    run: RunResult
    verdict: Verdict
    n: int


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


def open_branch(script: Path, settings: Settings, parts: Parts) -> BranchWriter:
    """Where the fixes of ``script`` go: ``parts.writer`` when given, else its git branch
    (``--branch`` or :func:`default_branch`), prepared from ``parts.base`` or HEAD; with
    ``--clean-tree`` the script must have no uncommitted changes (:class:`AutofixError`)."""
    if parts.writer is not None:
        return parts.writer
    repo = open_repo(script, init=settings.init)
    if settings.clean_tree:
        try:
            rel = script.relative_to(repo_root(repo)).as_posix()
        except ValueError:  # outside the work tree: prepare_branch says so
            rel = script.name
        require_clean(repo, [rel])
    return prepare_branch(repo, script, settings.branch or default_branch(script),
                          settings.resume, base=parts.base, dry_run=settings.dry_run)


class Session:
    """The world of one session (module docstring). Raises :class:`AutofixError` when the
    script cannot run or its branch cannot be prepared."""

    def __init__(self, script: Path, settings: Settings, parts: Parts) -> None:
        self.o = settings
        self.parts = parts
        self.observer = parts.observer
        #: The recipes for a category id, as ``--only`` / ``--skip`` allow them.
        self.recipes: RecipeLookup = lambda category: tuple(
            r for r in parts.recipes(category) if settings.allows(r.id))
        self.script = check_script(script)
        self.versions = parts.versions(settings.python)
        self.branch = open_branch(self.script, settings, parts)
        self.result = SessionResult(Status.ERROR, self.branch.branch, "not run",
                                    versions=dict(self.versions), dry_run=settings.dry_run,
                                    earlier_fixes=len(self.branch.autofix_commits()))
        self.document = document_for(self.script)
        #: The number of the latest run, and its note.
        self.n = 0
        self.note = ""
        #: Diagnosis runs cut the data to ``--sample-rows`` rows until a healthy one is
        #: verified on all of it (:meth:`verify_on_full_data`).
        self.sampling = settings.sample_rows > 0
        #: Set to stop the running child (the API check found drift alongside run 1).
        self.interrupt = threading.Event()
        #: What the API check found before run 1 that has no edit, reported first.
        self.early_findings: list[Finding] = []

    @property
    def program(self) -> Program:
        """The Python program the branch's current file stands for."""
        return self.document.program(self.branch.source)

    def verify_on_full_data(self) -> None:
        """From the next run on, the data is no longer cut (``--sample-rows``)."""
        self.sampling = False

    def run(self, note: str = "", env: dict[str, str] | None = None,
            candidate: tuple[str, str] | None = None) -> RunResult:
        """The next run of the branch's program, shown with ``note``; ``env`` is added to
        its environment; ``candidate`` (``(rel, source)``: the script's program or one of
        the user's modules as a candidate fix would make it) runs in place of the branch's
        version, uncommitted. A run that raised nothing gets the findings its source shows
        (:func:`~autofix.loop.verdicts.source_findings`)."""
        self.n += 1
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
                       cancel=Either(self.interrupt, self.parts.cancel), warm=self.parts.warm,
                       modules={str(Path(self.branch.root) / rel): text
                                for rel, text in files.items()})
        self.result.skipped = program.skipped
        result = self.parts.runner(spec, source, self.observer.output_line, self.observer.step)
        if result.probe.exception is None:  # silent faults the source shows (a hand loop's)
            result.probe.findings += source_findings(source)
        self.result.warnings += [f"run {self.n}: a probe failed inside the script's process "
                                 f"({e}); its facts are missing" for e in result.probe.probe_errors]
        if result.teardown:
            self.result.warnings.append(f"run {self.n}: {result.teardown}")
        return result

    def judged_run(self, note: str = "", env: dict[str, str] | None = None,
                   candidate: tuple[str, str] | None = None) -> Judged:
        """The next run (:meth:`run`) and its verdict: the one place a run is judged
        (:func:`~autofix.loop.verdicts.judge`, worded by :meth:`worded`)."""
        run = self.run(note, env, candidate)
        found = judge(run, self.script, self.branch.root)
        return Judged(run, self.worded(found) if isinstance(found, Diagnosis) else found, self.n)

    def judge_preflight(self, run: RunResult, exc: ExceptionInfo) -> Diagnosis | None:
        """The diagnosis of the preflight finding ``exc`` of ``run``
        (:func:`~autofix.loop.verdicts.judge_preflight`), worded as a run's."""
        found = judge_preflight(run, exc, self.script, self.branch.root)
        return self.worded(found) if found is not None else None

    def worded(self, found: Diagnosis) -> Diagnosis:
        """``found`` with paths made relative (no machine paths in commits and reports) and,
        by its category's ``explain``, a missing file named with the folder it was looked
        up from."""
        root = self.branch.root
        category = get_category(found.category) if is_category(found.category) else None
        if category is not None and category.explain is not None:
            found = category.explain(found, Place(self.o.cwd, root))
        return dataclasses.replace(
            found, evidence=relative_paths(found.evidence, root),
            details=tuple(relative_paths(d, root) for d in found.details))

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

    def record(self, run: RunResult, verdict: Verdict) -> RunRecord:
        """The line in the result of ``run`` judged ``verdict`` (its outcome, verdict, losses,
        chance level, evaluation and phases; numbered and noted as the latest run),
        appended to ``result.runs``."""
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

    def finished(self, rec: RunRecord, verdict: Verdict) -> None:
        """Tell the observer the run of ``rec`` is over, with its diagnosis."""
        self.observer.run_finished(rec, verdict if isinstance(verdict, Diagnosis) else None)

    def finish(self, status: Status, reason: str, diag: Diagnosis | None = None) -> SessionResult:
        """The result, ended ``status`` for ``reason`` (the last diagnosis ``diag``), the API
        check's findings first among its findings."""
        self.result.findings = [*self.early_findings, *(f for f in self.result.findings
                                                        if f not in self.early_findings)]
        self.result.status = status
        self.result.reason = reason
        self.result.last_diagnosis = diag
        return self.result

    def forget_runs_from(self, n: int) -> None:
        """Drop run ``n`` and those after it from the result, and count runs from ``n``
        again (a run 1 the API check stopped: it ran the drifted source)."""
        self.result.runs = [r for r in self.result.runs if r.n < n]
        self.n = n - 1

    def modules(self, run: RunResult | None = None) -> list[str]:
        """The user's own modules a recipe may edit after the script (POSIX paths in the
        repository): those in the failure's frames of ``run``, innermost first, then those
        the script imports (:func:`autofix.run.programs.local_modules`); the script,
        notebooks, environments and files outside the repository are never among them."""
        root = Path(self.branch.root).resolve()
        exc = run.probe.exception if run is not None else None
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

    def relative(self, file: str) -> str:
        """``file`` (a path the child reported) relative to the repository ("" outside)."""
        if not file:
            return ""
        try:
            return Path(file).resolve().relative_to(Path(self.branch.root).resolve()).as_posix()
        except (ValueError, OSError):
            return ""


class Either(threading.Event):
    """Set when any of ``events`` is (``None`` entries ignored): the runner's ``cancel``."""

    def __init__(self, *events: threading.Event | None) -> None:
        super().__init__()
        self.events = [e for e in events if e is not None]

    def is_set(self) -> bool:
        return super().is_set() or any(e.is_set() for e in self.events)
