"""Batch repair: many scripts and notebooks, each on its own branch from the same HEAD.

Two backends. ``thread`` (default): workers are threads (each repair spends its time
waiting on its child process); every script gets its own branch, so workers never write
the same ref, and commits are made with private index files (``gitops``), so they never
share the index either. ``ray`` (:mod:`autofix.batch.ray_backend`): each repair is a Ray task that
returns its fixes, which this process replays (:func:`autofix.vcs.writers.replay`). With a
``sandbox``, a session runs detached on a throwaway copy of the work tree and its fixes
are replayed the same way. One script that crashes, hangs or cannot be fixed only ends
its own row.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autofix.errors import AutofixError, classify_error
from autofix.loop.engine import Options, repair
from autofix.reports.formats import session_json
from autofix.run.sandbox import Sandbox
from autofix.types import Diagnosis, RunRecord, SessionResult, Status
from autofix.vcs.repo import branch_names, head_sha, open_repo, repo_root
from autofix.vcs.writers import MemoryBranch, PendingCommit, replay

SUFFIXES = (".py", ".ipynb")
_SKIP_DIRS = {".git", "__pycache__", ".ipynb_checkpoints", ".venv", "node_modules"}


def collect(paths: Sequence[str]) -> list[Path]:
    """The scripts and notebooks named by ``paths`` (files, folders searched recursively,
    globs), resolved, deduplicated, sorted. Raises :class:`AutofixError` for a path that
    matches nothing."""
    found: dict[Path, None] = {}
    for raw in paths:
        matches = [Path(p) for p in glob.glob(raw, recursive=True)] or [Path(raw)]
        hit = False
        for match in matches:
            if match.is_dir():
                for root, dirs, files in os.walk(match):
                    dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS
                                     and not d.startswith("."))
                    for name in sorted(files):
                        if name.endswith(SUFFIXES):
                            found[(Path(root) / name).resolve()] = None
                            hit = True
            elif match.is_file() and match.suffix in SUFFIXES:
                found[match.resolve()] = None
                hit = True
        if not hit:
            raise AutofixError(f"{raw}: no .py or .ipynb file there")
    return sorted(found)


def branch_name(prefix: str, rel: str) -> str:
    """``prefix`` + the script's repo-relative path without suffix, made a valid ref
    (``autofix/`` + ``course/ex01.py`` -> ``autofix/course/ex01``)."""
    stem = rel.rsplit(".", 1)[0]
    parts = [re.sub(r"[^A-Za-z0-9._-]+|\.\.+", "-", p).strip(".-") or "x"
             for p in stem.split("/")]
    return prefix + "/".join(re.sub(r"\.lock$", "-lock", p) for p in parts)


@dataclass
class Row:
    """One script's line in the batch view and report."""

    path: str
    branch: str
    status: str = "waiting"
    run: int = 0
    fixes: int = 0
    note: str = ""
    seconds: float = 0.0
    result: SessionResult | None = None
    error: str = ""
    #: The boundary's exit code for a row that ended by an error (2 usage/env, 3 crash).
    code: int = 0
    nodes: list[str] = field(default_factory=list)  # Ray nodes that ran it (retries: >1)
    overhead: float = 0.0  # Ray: seconds from submission to the task starting
    started: float = 0.0  # time.monotonic() when its repair began (0: not yet)

    def elapsed(self) -> float:
        """Seconds so far: live while the script runs, the total once it ended."""
        if self.status == "running" and self.started:
            return time.monotonic() - self.started
        return self.seconds


class _RowObserver:
    def __init__(self, row: Row, changed: Callable[[], None]) -> None:
        self.row = row
        self.changed = changed

    def run_started(self, n: int, note: str) -> None:
        self.row.status, self.row.run = "running", n
        self.changed()

    def output_line(self, line: str) -> None:
        self.row.note = line[-60:]

    def run_finished(self, record: RunRecord, diagnosis: Diagnosis | None) -> None:
        if record.commit:
            self.row.fixes += len(record.recipe.split(", "))
        self.row.note = diagnosis.category if diagnosis else record.outcome
        self.changed()


@dataclass
class BatchOptions:
    """Batch settings; ``template`` carries the per-script options (python, limits)."""

    paths: Sequence[str]
    jobs: int = field(default_factory=lambda: os.cpu_count() or 1)
    branch_prefix: str = "autofix/"
    template: Options | None = None
    backend: str = "thread"  # "thread" or "ray"
    sandbox: Sandbox | None = None
    ray: Any = None  # autofix.batch.ray_backend.RayOptions when backend == "ray"


#: Folders never copied into a sandbox or uploaded to a Ray cluster.
COPY_IGNORE = shutil.ignore_patterns(".git", ".venv*", "__pycache__", ".ipynb_checkpoints",
                                     "node_modules", ".mypy_cache", ".pytest_cache")


@dataclass(frozen=True)
class Job:
    """What a detached worker needs to repair one script (picklable for Ray)."""

    index: int
    rel: str  # the script's path in the repository (POSIX)
    branch: str
    source: str  # the user's file as run
    python: str
    args: tuple[str, ...]
    timeout: float | None
    max_steps: int
    max_iterations: int
    env: dict[str, str]
    sandbox: Sandbox | None = None
    repo_root: str = ""  # the repository on the driver (read-only inside a sandbox)


def repair_detached(job: Job, root: Path, observer: Any,
                    cancel: threading.Event | None = None
                    ) -> tuple[SessionResult, list[PendingCommit]]:
    """Repair ``job``'s script found under ``root`` (a work tree: the repository on a
    shared filesystem, or Ray's unpacked copy) without touching git: returns the session
    result and the commits to replay. With a sandbox, the work tree is first copied to a
    throwaway folder (removed afterwards) and the runs happen there."""
    scratch = None
    try:
        if job.sandbox is not None:
            scratch = Path(tempfile.mkdtemp(prefix="autofix-sandbox-"))
            shutil.copytree(root, scratch / "tree", ignore=COPY_IGNORE, symlinks=True)
            root = scratch / "tree"
        script = root / job.rel
        writer = MemoryBranch(job.branch, job.rel, job.source)
        sandbox = job.sandbox
        if sandbox is not None and job.repo_root:
            sandbox = Sandbox(**{**sandbox.__dict__, "readonly": (job.repo_root,)})
        opts = Options(script=script, python=job.python, args=job.args, branch=job.branch,
                       cwd=script.parent, timeout=job.timeout, max_steps=job.max_steps,
                       max_iterations=job.max_iterations, cancel=cancel, env=dict(job.env),
                       writer=writer, sandbox=sandbox)
        result = repair(opts, observer)
        return result, writer.commits
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def run_batch(options: BatchOptions, changed: Callable[[list[Row]], None] | None = None,
              cancel: threading.Event | None = None) -> list[Row]:
    """Repair every collected script on its own branch, ``options.jobs`` at a time.

    ``changed(rows)`` is called (from worker threads) whenever a row changes. Raises
    :class:`AutofixError` before any run for bad paths, a missing repository, or scripts
    in different repositories. On ``cancel`` (Ctrl-C), running children are killed and
    waiting scripts are marked ``interrupted``.
    """
    cancel = cancel or threading.Event()
    scripts = collect(options.paths)
    repo = open_repo(scripts[0])
    root = repo_root(repo)
    base = head_sha(repo)
    rows = []
    for script in scripts:
        try:
            rel = script.relative_to(root).as_posix()
        except ValueError:
            raise AutofixError(f"{script} is not in the repository {root}",
                               hint="batch-repair one repository at a time") from None
        rows.append(Row(rel, branch_name(options.branch_prefix, rel)))
    existing = branch_names(repo)
    taken = [r.branch for r in rows if r.branch in existing]
    if taken:
        raise AutofixError(f"branch(es) already exist: {', '.join(taken)}",
                           hint="delete them or choose another --branch-prefix")
    lock = threading.Lock()

    def notify() -> None:
        if changed is not None:
            with lock:
                changed(rows)

    template = options.template or Options(script=scripts[0])
    env = dict(template.env)
    if "OMP_NUM_THREADS" not in os.environ:  # N children x all cores each would thrash
        env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // max(1, options.jobs)))
    jobs = [Job(i, row.path, row.branch, (root / row.path).read_bytes().decode("utf-8"),
                template.python, tuple(template.args), template.timeout, template.max_steps,
                template.max_iterations, env, options.sandbox, str(root))
            for i, row in enumerate(rows)]
    if options.backend == "ray":
        from autofix.batch.ray_backend import run_on_ray  # Ray is an optional extra

        run_on_ray(jobs, rows, root, base, options.ray, notify, cancel)
        return rows

    def work(row: Row) -> None:
        if cancel.is_set():
            row.status = "interrupted"
            return
        started = row.started = time.monotonic()
        opts = Options(script=root / row.path, python=template.python, args=template.args,
                       branch=row.branch, cwd=template.cwd,  # the caller's, as single mode
                       timeout=template.timeout, max_steps=template.max_steps,
                       max_iterations=template.max_iterations, base=base, cancel=cancel,
                       env=env)
        try:
            if options.sandbox is not None:
                job = jobs[rows.index(row)]
                result, commits = repair_detached(job, root, _RowObserver(row, notify), cancel)
                result = replay(root / row.path, row.branch, base, commits, result)
            else:
                result = repair(opts, _RowObserver(row, notify))
            row.result = result
            row.fixes = len(result.fixes)  # fixes made before the first run count too
            row.status = "interrupted" if result.interrupted else result.status.value
        except Exception as exc:  # noqa: BLE001 - the boundary, per script: one script's
            # error or crash ends only its row (errors.classify_error: 2 usage/env, 3 bug)
            verdict = classify_error(exc)
            row.status, row.error, row.code = Status.ERROR.value, verdict.message, verdict.code
            if verdict.log is not None:
                row.error += f" (traceback saved to {verdict.log})"
        row.seconds = time.monotonic() - started
        notify()

    with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
        try:
            list(pool.map(work, rows))
        except KeyboardInterrupt:
            cancel.set()  # running children are killed; the pool then drains quickly
            raise
    return rows


def batch_json(rows: list[Row]) -> dict[str, Any]:
    """The ``--report`` document: ``{"scripts": [{"path", "status", "branch", "fixes",
    "runs", "seconds", ...}]}`` with the single-script report's statuses."""
    scripts = []
    for row in rows:
        single = session_json(row.result) if row.result else {}
        scripts.append({
            "path": row.path, "status": row.status,
            "branch": row.branch if single.get("fixes") else None,
            "fixes": single.get("fixes", []), "runs": single.get("runs", []),
            "seconds": round(row.seconds, 2),
            "reason": row.error or single.get("reason", ""),
            "skipped": single.get("skipped", []),
            **({"nodes": row.nodes, "overhead": round(row.overhead, 2)} if row.nodes else {}),
        })
    return {"scripts": scripts}


def _code(text: str) -> str:
    """``text`` as a Markdown code span, fenced with more backticks than it holds."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or longest else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def batch_markdown(rows: list[Row], title: str = "autofix batch report") -> str:
    """A report a teacher can read: a summary table, then per script its fixes with the
    evidence, the runs and the time."""
    out = [f"# {title}", "", "| script | status | fixes | runs | seconds |",
           "|---|---|---|---|---|"]
    for row in rows:
        runs = len(row.result.runs) if row.result else 0
        fixes = len(row.result.fixes) if row.result else row.fixes  # preflight fixes too
        out.append(f"| `{row.path}` | {row.status} | {fixes} | {runs} | "
                   f"{row.seconds:.0f} |")
    for row in rows:
        out += ["", f"## `{row.path}`: {row.status}", ""]
        result = row.result
        if row.error or result is None:
            out.append(f"autofix could not run it: {row.error or 'not started'}")
            continue
        out.append(result.reason[:1].upper() + result.reason[1:] + ".")
        if result.fixes:
            out += ["", f"Branch `{row.branch}` (review: `git diff HEAD..{row.branch}`):", ""]
        by_number = {r.n: r for r in result.runs}
        for fix in result.fixes:
            run = by_number.get(fix.run)
            why = f" (run {run.n}: {_code(run.evidence)})" if run else \
                f" (before the first run: {_code(fix.evidence)})" if fix.evidence else ""
            out.append(f"- **{fix.category}**: {fix.summary}{why}, commit `{fix.commit[:8]}`")
        if result.skipped:
            out += ["", "Not run (IPython magics and shell lines): "
                    + ", ".join(_code(s) for s in result.skipped)]
        out += ["", "| run | outcome | category | evidence | seconds |",
                "|---|---|---|---|---|"]
        for r in result.runs:
            text = r.evidence.replace("|", "\\|")[:120]
            out.append(f"| {r.n} | {r.outcome} | {r.category or '-'} | {text} | "
                       f"{r.seconds:.1f} |")
    return "\n".join(out) + "\n"
