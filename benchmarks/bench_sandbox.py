"""What ``--sandbox``'s confinement costs a run: the wall time of a command in the training
environment started bare and started as a sandboxed run is (the pids cgroup, ``prlimit``,
bubblewrap's namespaces and mounts: :func:`autofix.run.sandbox.confine`), alternating, the
median of ``--runs`` each. Prints what isolated the sandboxed runs (bubblewrap, or the
limits alone where it is missing).

Usage: ``.venv/bin/python benchmarks/bench_sandbox.py [--runs N] [--code CODE ...]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autofix.run.sandbox import bubblewrap, confine, interpreter_roots, isolation
from autofix.settings import Sandbox


def seconds(argv: list[str]) -> float:
    """Wall seconds of ``argv`` run to its end (raises when it fails)."""
    started = time.perf_counter()
    subprocess.run(argv, check=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - started


def measure(code: str, runs: int, python: str) -> tuple[float, float]:
    """Median wall seconds of ``python -c code``, bare and sandboxed, ``runs`` each."""
    bare: list[float] = []
    boxed: list[float] = []
    with tempfile.TemporaryDirectory() as work, tempfile.TemporaryDirectory() as run:
        for _ in range(runs):
            bare.append(seconds([python, "-c", code]))
            confined = confine([python, "-c", code], Sandbox(workdir=work), python=python,
                               env=dict(os.environ), cwd=Path(work), run_dir=Path(run))
            try:
                boxed.append(seconds(confined.cmd))
            finally:
                confined.close()
    return statistics.median(bare), statistics.median(boxed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="runs of each kind (default 20)")
    parser.add_argument("--code", nargs="+", default=["pass", "import torch"],
                        help="what the interpreter runs (default: pass, import torch)")
    parser.add_argument("--python", default=sys.executable, help="the training interpreter")
    args = parser.parse_args()
    print(f"isolation: {isolation()['isolation']}")
    bubblewrap(), interpreter_roots(args.python)  # the probes, once per process: not timed
    for code in args.code:
        bare, boxed = measure(code, args.runs, args.python)
        print(f"python -c {code!r}: bare {bare:.3f} s, sandboxed {boxed:.3f} s, "
              f"overhead {boxed - bare:+.3f} s (median of {args.runs})")


if __name__ == "__main__":
    main()
