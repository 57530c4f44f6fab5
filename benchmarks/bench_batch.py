"""Batch wall time on the course exercise set: ``--jobs 1`` against ``--jobs 2``.

Each setting repairs ``sample_scripts/course`` in its own scratch repository through the
real CLI; printed: wall seconds, statuses and fixes per setting.

Usage: python benchmarks/bench_batch.py [--jobs 1 2]
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


def scratch(base: Path) -> Path:
    repo = base / "repo"
    (repo / "sample_scripts").mkdir(parents=True)
    shutil.copytree(ROOT / "sample_scripts" / "course", repo / "sample_scripts" / "course")
    shutil.copytree(ROOT / "sample_scripts" / "data", repo / "sample_scripts" / "data")
    git = ["git", "-C", str(repo)]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "-c", "user.name=bench", "-c", "user.email=b@b", "commit", "-q",
                    "-m", "exercises"], check=True)
    return repo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    opts = parser.parse_args()
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    for jobs in opts.jobs:
        with tempfile.TemporaryDirectory() as tmp:
            repo = scratch(Path(tmp))
            started = time.monotonic()
            done = subprocess.run(
                [sys.executable, "-m", "autofix", "batch", "sample_scripts/course", "--jobs",
                 str(jobs), "--report", "../r.json"], cwd=repo, env=env, capture_output=True,
                text=True)
            wall = time.monotonic() - started
            report = json.loads((Path(tmp) / "r.json").read_text())
            statuses = [s["status"] for s in report["scripts"]]
            fixes = sum(len(s["fixes"]) for s in report["scripts"])
            print(f"--jobs {jobs}: {wall:.0f} s wall, exit {done.returncode}, "
                  f"{len(statuses)} exercises, {statuses.count('fixed')} fixed, "
                  f"{fixes} fixes")


if __name__ == "__main__":
    main()
