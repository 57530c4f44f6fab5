"""The Ray backend of ``autofix batch``: one Ray task per script, git written here only.

Each task repairs one script detached from git (:func:`autofix.batch.jobs.repair_detached`)
and returns its result and its commits; this process (the driver) replays them on the
script's branch (:func:`autofix.vcs.writers.replay`), so no two machines write one repository.
The work tree reaches a worker through the shared filesystem when every node is this
machine (or ``ship="shared"``), else through Ray's ``runtime_env`` ``working_dir``
(``.git`` and virtual environments excluded, capped at ``max_upload_mb``). Progress comes
back through a small actor and drives the same live table as the thread backend. A task
whose node dies is retried elsewhere (``max_retries``); Ctrl-C cancels every task (each
kills its child's process group).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from autofix.batch.jobs import Job, Row, repair_detached
from autofix.errors import AutofixError
from autofix.run.sandbox import isolation
from autofix.types import Diagnosis, RunRecord, SessionResult, Status
from autofix.vcs.writers import PendingCommit, replay

#: Files never uploaded (same as the sandbox copy's ignore list).
UPLOAD_EXCLUDES = [".git", ".venv*", "__pycache__", ".ipynb_checkpoints", "node_modules",
                   ".mypy_cache", ".pytest_cache"]


@dataclass(frozen=True)
class RayOptions:
    """Ray settings: ``address`` (None: start a local Ray; ``"auto"``: the running
    cluster; ``HOST:PORT``), resources declared per script (``cpus``, ``memory_mb``),
    ``max_retries`` after a node or worker dies, how the work tree travels (``ship``:
    ``auto``, ``shared`` or ``upload``) and the upload cap in MiB."""

    address: str | None = None
    cpus: float = 1.0
    memory_mb: int = 4096
    max_retries: int = 3
    ship: str = "auto"
    max_upload_mb: int = 100


@dataclass
class TaskResult:
    """What a task sends back: the session result, its commits, where it ran."""

    result: SessionResult
    commits: list[PendingCommit]
    node: str
    seconds: float
    overhead: float  # seconds from submission to the task starting (scheduling, transfer)
    isolation: dict[str, str]  # --sandbox: what isolated its runs on that node (else empty)


@ray.remote(num_cpus=0)
class Progress:
    """Collects row updates from running tasks; the driver takes them every half second."""

    def __init__(self) -> None:
        self.updates: dict[int, dict[str, Any]] = {}

    def put(self, index: int, fields: dict[str, Any]) -> None:
        self.updates.setdefault(index, {}).update(fields)

    def take(self) -> dict[int, dict[str, Any]]:
        out, self.updates = self.updates, {}
        return out


class _TaskObserver:
    """The engine's observer inside a task: sends the row's fields to :class:`Progress`."""

    def __init__(self, progress: Any, index: int, node: str) -> None:
        self.progress, self.index, self.node = progress, index, node
        self.fixes = 0
        self.last_note = 0.0

    def _put(self, **fields: Any) -> None:
        self.progress.put.remote(self.index, {"node": self.node, **fields})

    def run_started(self, n: int, note: str) -> None:
        self._put(status="running", run=n)

    def output_line(self, line: str) -> None:
        now = time.monotonic()
        if now - self.last_note > 1.0:  # one message a second is enough for a table
            self.last_note = now
            self._put(note=line[-60:])

    def run_finished(self, record: RunRecord, diagnosis: Diagnosis | None) -> None:
        if record.commit:
            self.fixes += len(record.recipe.split(", "))
        self._put(fixes=self.fixes, note=diagnosis.category if diagnosis else record.outcome)

    def step(self, n: int, loss: float | None, total: int = 0) -> None:
        pass


def _repair_task(job: Job, root: str, progress: Any, submitted: float) -> TaskResult:
    started = time.time()
    if os.getpriority(os.PRIO_PROCESS, 0) < 0:  # a raylet started at a raised priority:
        os.setpriority(os.PRIO_PROCESS, 0, 0)  # the scripts run at the normal one
    node = ray.get_runtime_context().get_node_id()[:8]
    here = Path(root) if root else Path.cwd()  # upload: cwd is the unpacked working_dir
    result, commits = repair_detached(job, here, _TaskObserver(progress, job.index, node))
    return TaskResult(result, commits, node, time.time() - started, started - submitted,
                      isolation() if job.settings.sandbox is not None else {})


def tree_size(root: Path) -> int:
    """Bytes that an upload of ``root`` would send (``UPLOAD_EXCLUDES`` left out)."""
    skip = {e for e in UPLOAD_EXCLUDES if "*" not in e}
    total = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in skip and not d.startswith(".venv")]
        total += sum(os.path.getsize(os.path.join(folder, f)) for f in files
                     if os.path.isfile(os.path.join(folder, f)))
    return total


def _local_addresses() -> set[str]:
    addresses = {"127.0.0.1", ray.util.get_node_ip_address()}  # type: ignore[no-untyped-call]
    try:
        addresses |= set(socket.gethostbyname_ex(socket.gethostname())[2])
    except OSError:
        pass
    return addresses


def _shared(ship: str) -> bool:
    if ship in ("shared", "upload"):
        return ship == "shared"
    here = _local_addresses()
    return all(n["NodeManagerAddress"] in here for n in ray.nodes()  # type: ignore[no-untyped-call]
               if n["Alive"])


def _connect(address: str | None, jobs: int) -> bool:
    """Connect to Ray; True when this call started it (and must shut it down)."""
    if ray.is_initialized():
        return False
    try:
        if address is None:  # a private local Ray, sized for the jobs
            ray.init(num_cpus=jobs, include_dashboard=False, logging_level=logging.WARNING,
                     object_store_memory=100 * 1024 * 1024, log_to_driver=False)
        else:
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise AutofixError(f"cannot connect to Ray at {address or 'a new local cluster'}: "
                           f"{exc}", hint="start the cluster (`ray start --head`) or check "
                                          "--address") from None
    return True


def run_on_ray(jobs: list[Job], rows: list[Row], root: Path, base: str,
               options: RayOptions | None, notify: Callable[[], None],
               cancel: threading.Event) -> None:
    """Run ``jobs`` as Ray tasks and fill ``rows`` (same order) with their outcomes.

    Raises :class:`AutofixError` when Ray cannot be reached or the work tree is over the
    upload cap; ``KeyboardInterrupt`` after cancelling every task on Ctrl-C (``cancel``).
    """
    o = options or RayOptions()
    owned = _connect(o.address, len(jobs))
    try:
        runtime_env: dict[str, Any] = {}
        shared_root = str(root)
        if not _shared(o.ship):
            size = tree_size(root)
            if size > o.max_upload_mb * 1024 * 1024:
                raise AutofixError(
                    f"the work tree {root} is {size / 2**20:.0f} MiB, over the upload cap of "
                    f"{o.max_upload_mb} MiB for Ray's working_dir",
                    hint="put the repository on a filesystem every node shares (--ship "
                         "shared), move large data out of it, or raise --max-upload-mb")
            runtime_env = {"working_dir": str(root), "excludes": UPLOAD_EXCLUDES}
            shared_root = ""
        # on the driver's own node: a node that dies must not take the live table with it
        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(),
                                              soft=False)
        progress = Progress.options(  # type: ignore[attr-defined]
            scheduling_strategy=here).remote()
        cpus = max(1, round(o.cpus))
        task = ray.remote(_repair_task).options(
            num_cpus=o.cpus, memory=o.memory_mb * 1024 * 1024, max_retries=o.max_retries,
            retry_exceptions=False, runtime_env=runtime_env or None)
        pending: dict[Any, int] = {}
        submitted: dict[int, float] = {}
        for job in jobs:
            env = {**job.settings.env,
                   "OMP_NUM_THREADS": job.settings.env.get("OMP_NUM_THREADS", str(cpus))}
            submitted[job.index] = time.time()
            ref = task.remote(dataclasses.replace(job, settings=dataclasses.replace(
                job.settings, env=env)), shared_root, progress, submitted[job.index])
            pending[ref] = job.index
        _collect(pending, rows, root, base, progress, notify, cancel)
    finally:
        if owned:
            ray.shutdown()


def _apply(rows: list[Row], updates: dict[int, dict[str, Any]]) -> bool:
    for index, fields in updates.items():
        row = rows[index]
        if row.status not in ("waiting", "running"):
            continue  # a late message from a finished or retried attempt
        node = fields.pop("node", "")
        if node and (not row.nodes or row.nodes[-1] != node):
            row.nodes.append(node)
        for key, value in fields.items():
            setattr(row, key, value)
    return bool(updates)


def _collect(pending: dict[Any, int], rows: list[Row], root: Path, base: str, progress: Any,
             notify: Callable[[], None], cancel: threading.Event) -> None:
    try:
        while pending:
            if cancel.is_set():
                raise KeyboardInterrupt
            done, _ = ray.wait(list(pending), num_returns=len(pending), timeout=0.5,
                               fetch_local=True)
            changed = _apply(rows, ray.get(progress.take.remote()))
            for ref in done:
                row = rows[pending.pop(ref)]
                _finish(row, ref, root, base)
                changed = True
            if changed:
                notify()
    except KeyboardInterrupt:
        cancel.set()
        for ref in pending:
            ray.cancel(ref)  # raises KeyboardInterrupt in the task: its child group dies
        for index in pending.values():
            rows[index].status = "interrupted"
        ray.wait(list(pending), num_returns=len(pending), timeout=10)
        raise


def _finish(row: Row, ref: Any, root: Path, base: str) -> None:
    try:
        out: TaskResult = ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        cause = exc.cause if isinstance(exc.cause, Exception) else exc
        row.status, row.error = Status.ERROR.value, str(cause).strip().splitlines()[-1]
        return
    except ray.exceptions.RayError as exc:  # node or worker lost after every retry
        row.status, row.error = Status.ERROR.value, f"Ray lost the task: {exc}"[:300]
        return
    if not row.nodes or row.nodes[-1] != out.node:
        row.nodes.append(out.node)
    row.seconds, row.overhead, row.isolation = out.seconds, out.overhead, out.isolation
    try:
        row.result = replay(root / row.path, row.branch, base, out.commits, out.result)
    except AutofixError as exc:
        row.status, row.error = Status.ERROR.value, str(exc)
        return
    row.fixes = len(row.result.fixes)
    row.status = "interrupted" if row.result.interrupted else row.result.status.value
