"""Batch on a real two-node Ray cluster, and 4 workers of each backend on one repository.

The cluster (``tests/ray_cluster.py``) is started once per session and stopped at the end;
node 2 is killed in the middle of a batch, and the tasks it ran are retried on the head.
Scripts are fast (an import that fails within seconds, fixed by the api-drift recipe).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import git
import pytest

from autofix.batch.local import BatchOptions, Row, run_batch
from autofix.settings import Settings

from .conftest import ROOT, TEST_SCRIPTS, make_repo, snapshot, trailers

pytestmark = pytest.mark.e2e  # real transformers imports; the Ray test starts a cluster
ray = pytest.importorskip("ray")
from autofix.batch.ray_backend import RayOptions  # noqa: E402
from tests.ray_cluster import Cluster, start_cluster  # noqa: E402

DRIFT = "from transformers import AdamW\nprint('optimizer', AdamW.__name__)\n"
SLOW_DRIFT = "import time\ntime.sleep(15)\n" + DRIFT  # each run: long enough to die in


#: (fixable, clean, broken) submissions of a batch
TWENTY = (10, 5, 5)
TEN = (6, 2, 2)


def scripts(counts: tuple[int, int, int]) -> dict[str, str | Path]:
    """Submissions: ``counts[0]`` fixable (one api-drift commit each), ``counts[1]`` clean,
    ``counts[2]`` that do not parse."""
    drift, clean, broken = counts
    files: dict[str, str | Path] = {f"sub/drift_{i:02d}.py": DRIFT for i in range(drift)}
    files.update({f"sub/clean_{i}.py": TEST_SCRIPTS / "clean.py" for i in range(clean)})
    files.update({f"sub/broken_{i}.py": TEST_SCRIPTS / "syntax_error.py"
                  for i in range(broken)})
    return files


def check_repository(repo: git.Repo, rows: list[Row], base: str,
                     counts: tuple[int, int, int] = TWENTY) -> None:
    """0 broken refs, every fixed branch holds exactly its one api-drift commit."""
    drift, clean, broken = counts
    repo.git.fsck("--strict", "--no-dangling")
    status = {r.path: r.status for r in rows}
    assert status == {**{f"sub/drift_{i:02d}.py": "fixed" for i in range(drift)},
                      **{f"sub/clean_{i}.py": "clean" for i in range(clean)},
                      **{f"sub/broken_{i}.py": "error" for i in range(broken)}}, \
        {r.path: (r.status, r.error) for r in rows}
    branches = sorted(h.name for h in repo.heads if h.name != "main")
    assert branches == [f"autofix/sub/drift_{i:02d}" for i in range(drift)]
    for row in rows:
        if row.status != "fixed":
            continue
        assert trailers(repo, row.branch, "main") == ["api-drift"]
        tip = repo.commit(row.branch)
        assert tip.parents[0].hexsha == base
        assert row.result is not None and row.result.fixes[0].commit == tip.hexsha
        source = (tip.tree / row.path).data_stream.read().decode()
        assert "from torch.optim import AdamW" in source


def template() -> Settings:
    return Settings(timeout=120, max_steps=5, max_iterations=3, env={"OMP_NUM_THREADS": "1"})


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    auth = os.environ.get("RAY_AUTH_MODE")
    running = start_cluster(ROOT, nodes=2)
    os.environ["RAY_AUTH_MODE"] = running.env["RAY_AUTH_MODE"]  # the drivers of this process
    try:
        yield running
    finally:
        running.stop()
        if auth is None:
            os.environ.pop("RAY_AUTH_MODE", None)
        else:
            os.environ["RAY_AUTH_MODE"] = auth


@pytest.mark.slow  # the thread backend's 4 workers are tested in the default tier by
# tests/test_batch.py (7 scripts); the Ray test below runs 10 on one repository
def test_thread_backend_four_workers_twenty_scripts(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", scripts(TWENTY))
    root = Path(str(repo.working_tree_dir))
    before = snapshot(repo)
    rows = run_batch(BatchOptions([str(root / "sub")], 4, "autofix/", template()))
    check_repository(repo, rows, before["head"])
    assert snapshot(repo) == before


@pytest.mark.slow  # a second node started and killed: about 90 s
def test_ray_two_nodes_node_dies_mid_batch(tmp_path: Path, cluster: Cluster) -> None:
    """4 workers (0.5 CPU each) on two nodes; node 2 is killed while it runs a script:
    its tasks are retried on the head and every branch is still whole (10 submissions: 4
    of them slow, so one is running on node 2 when it dies)."""
    files = scripts(TEN)
    slow = {f"sub/drift_{i:02d}.py" for i in range(4)}
    files.update({path: SLOW_DRIFT for path in slow})
    repo = make_repo(tmp_path / "repo", files)
    root = Path(str(repo.working_tree_dir))
    before = snapshot(repo)
    killed = threading.Event()
    node2: list[str] = []

    def changed(rows: list[Row]) -> None:
        if killed.is_set():
            return
        if not node2:
            node2.extend(n["NodeID"][:8] for n in ray.nodes()
                         if n["NodeManagerPort"] == cluster.node2_port)
        if any(r.status == "running" and r.path in slow and r.nodes and r.nodes[-1] in node2
               for r in rows):  # a slow script: still running when its node dies
            killed.set()
            cluster.kill_node2()

    options = BatchOptions([str(root / "sub")], 4, "autofix/", template(), backend="ray",
                           ray=RayOptions(address=cluster.address, cpus=0.5, memory_mb=256,
                                          max_retries=3))
    rows = run_batch(options, changed)
    assert killed.is_set(), "no task ran on node 2"
    check_repository(repo, rows, before["head"], TEN)
    assert snapshot(repo) == before
    retried = [r for r in rows if len(r.nodes) > 1]
    assert retried and all(r.nodes[0] in node2 and r.nodes[-1] not in node2 for r in retried), \
        (node2, [(r.path, r.status, r.nodes) for r in rows])
    assert all(r.overhead >= 0 for r in rows)
