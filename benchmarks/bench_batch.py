"""Batch wall time on the course exercise set: threads ``--jobs 1/2`` against Ray with 1
and 2 local nodes (one CPU each), and Ray's overhead per script.

Each setting repairs ``sample_scripts/course`` (or ``--folder``) in its own scratch
repository through the real CLI; printed: wall seconds, statuses and fixes per setting,
and for Ray the mean seconds from a task's submission to its start (scheduling and
transfer) next to the mean repair time. Ray clusters are started with
``tests/ray_cluster.py`` (own ports and temp folder) and stopped afterwards.

Usage: nice python benchmarks/bench_batch.py [--settings threads:1 threads:2 ray:1 ray:2]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def scratch(base: Path, folder: Path) -> Path:
    repo = base / "repo"
    (repo / "sample_scripts").mkdir(parents=True)
    shutil.copytree(folder, repo / "sample_scripts" / "course")
    shutil.copytree(ROOT / "sample_scripts" / "data", repo / "sample_scripts" / "data")
    git = ["git", "-C", str(repo)]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "-c", "user.name=bench", "-c", "user.email=b@b", "commit", "-q",
                    "-m", "exercises"], check=True)
    return repo


def run(setting: str, folder: Path, env: dict[str, str]) -> None:
    backend, count = setting.split(":")
    cluster = None
    args = ["--jobs", count]
    if backend == "ray":
        from tests.ray_cluster import start_cluster

        t0 = time.monotonic()
        cluster = start_cluster(ROOT, nodes=int(count))
        print(f"ray: {count} node(s) up in {time.monotonic() - t0:.0f} s", flush=True)
        args = ["--backend", "ray", "--address", cluster.address, "--memory-mb", "2048"]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            repo = scratch(Path(tmp), folder)
            started = time.monotonic()
            done = subprocess.run(
                [sys.executable, "-m", "autofix", "batch", "sample_scripts/course", *args,
                 "--report", "../r.json"], cwd=repo, env=env, capture_output=True, text=True)
            wall = time.monotonic() - started
            report = json.loads((Path(tmp) / "r.json").read_text())
    finally:
        if cluster is not None:
            cluster.stop()
    rows = report["scripts"]
    statuses = [s["status"] for s in rows]
    fixes = sum(len(s["fixes"]) for s in rows)
    line = (f"{setting}: {wall:.0f} s wall, exit {done.returncode}, {len(rows)} scripts, "
            f"{statuses.count('fixed')} fixed, {fixes} fixes, "
            f"{sum(s['seconds'] for s in rows) / len(rows):.1f} s repair per script")
    if backend == "ray":
        overhead = [s.get("overhead", 0.0) for s in rows]
        line += f", Ray overhead {sum(overhead) / len(overhead):.2f} s per script (mean)"
    print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--settings", nargs="+",
                        default=["threads:1", "threads:2", "ray:1", "ray:2"])
    parser.add_argument("--folder", type=Path, default=ROOT / "sample_scripts" / "course")
    opts = parser.parse_args()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT),
           "OMP_NUM_THREADS": "1"}
    for setting in opts.settings:
        run(setting, opts.folder.resolve(), env)


if __name__ == "__main__":
    main()
