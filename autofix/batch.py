"""Batch repair: many scripts and notebooks, each on its own branch from the same HEAD.

Workers are threads (each repair spends its time waiting on its child process); every
script gets its own branch, so workers never write the same ref, and commits are made
with private index files (``gitops``), so they never share the index either. One script
that crashes, hangs or cannot be fixed only ends its own row.
"""

from __future__ import annotations

import glob
import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import git

from autofix.engine import Options, repair
from autofix.errors import AutofixError
from autofix.gitops import open_repo
from autofix.reports import session_json
from autofix.types import Diagnosis, RunRecord, SessionResult, Status

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
    root = Path(str(repo.working_tree_dir)).resolve()
    base = repo.head.commit.hexsha
    rows = []
    for script in scripts:
        try:
            rel = script.relative_to(root).as_posix()
        except ValueError:
            raise AutofixError(f"{script} is not in the repository {root}",
                               hint="batch-repair one repository at a time") from None
        rows.append(Row(rel, branch_name(options.branch_prefix, rel)))
    existing = {h.name for h in repo.heads}
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
            result = repair(opts, _RowObserver(row, notify))
            row.result = result
            row.status = "interrupted" if result.interrupted else result.status.value
        except (AutofixError, git.GitCommandError, OSError) as exc:
            row.status, row.error = Status.ERROR.value, str(exc)
        except Exception as exc:  # noqa: BLE001 - one script's crash must not stop the rest
            row.status, row.error = Status.ERROR.value, f"autofix crashed: {exc!r}"
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
        out.append(f"| `{row.path}` | {row.status} | {row.fixes} | {runs} | "
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
            why = f" (run {run.n}: {_code(run.evidence)})" if run else ""
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
