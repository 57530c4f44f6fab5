"""Batch repair on this machine: many scripts and notebooks, each on its own branch from
the same HEAD, repaired by worker threads (each repair spends its time waiting on its
child process). Every script gets its own branch, so workers never write the same ref,
and commits are made with private index files (:mod:`autofix.vcs.repo`), so they never
share the index either. With ``--backend ray`` the jobs go to
:mod:`autofix.batch.ray_backend`; with a sandbox, a session runs detached on a throwaway
copy of the work tree, isolated by bubblewrap where this machine has it
(:mod:`autofix.run.sandbox`), and its fixes are replayed (:func:`autofix.vcs.writers.replay`).
One script that crashes, hangs or cannot be fixed only ends its own row.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from autofix.batch.jobs import Job, Row, branch_name, collect, repair_detached
from autofix.errors import AutofixError, classify_error
from autofix.loop.engine import repair
from autofix.run.sandbox import isolation
from autofix.settings import Settings
from autofix.types import Diagnosis, RunRecord, Status
from autofix.vcs.repo import branch_names, head_sha, open_repo, repo_root
from autofix.vcs.writers import replay


class _RowObserver:
    """The engine's observer for one row of the batch view."""

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

    def step(self, n: int, loss: float | None, total: int = 0) -> None:
        pass


@dataclass(frozen=True)
class BatchOptions:
    """Batch settings: the paths, scripts at once, the branch prefix, the backend (and
    Ray's options), and the :class:`Settings` every script is repaired with (every
    single-script option; ``branch`` is replaced per script by prefix + path)."""

    paths: Sequence[str]
    jobs: int = field(default_factory=lambda: os.cpu_count() or 1)
    branch_prefix: str = "autofix/"
    settings: Settings = field(default_factory=Settings)
    backend: str = "thread"  # "thread" or "ray"
    ray: Any = None  # autofix.batch.ray_backend.RayOptions when backend == "ray"


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
        raise AutofixError(f"{'branch' if len(taken) == 1 else 'branches'} already "
                           f"{'exists' if len(taken) == 1 else 'exist'}: {', '.join(taken)}",
                           hint="delete them or choose another --branch-prefix")
    lock = threading.Lock()

    def notify() -> None:
        if changed is not None:
            with lock:
                changed(rows)

    settings = options.settings
    if "OMP_NUM_THREADS" not in os.environ:  # N children x all cores each would thrash
        settings = dataclasses.replace(settings, env={
            **settings.env,
            "OMP_NUM_THREADS": str(max(1, (os.cpu_count() or 1) // max(1, options.jobs)))})
    jobs = [Job(i, row.path, row.branch, (root / row.path).read_bytes().decode("utf-8"),
                settings)
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
        # the caller's folder and settings, as in single mode; this script's branch
        single = dataclasses.replace(settings, branch=row.branch)
        try:
            if settings.sandbox is not None:
                row.isolation = isolation()
                job = jobs[rows.index(row)]
                result, commits = repair_detached(job, root, _RowObserver(row, notify), cancel)
                result = replay(root / row.path, row.branch, base, commits, result)
            else:
                result = repair(root / row.path, single, observer=_RowObserver(row, notify),
                                cancel=cancel, base=base)
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
