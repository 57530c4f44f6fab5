"""Diverging losses repaired: each case through the real CLI in a scratch repository, then
the branch's script run again the way ML-Dev-Bench's ``nan_losses`` test runs it.

Cases: the two samples of ``sample_scripts/divergence/`` (unnormalised inputs; exploding
gradients whose clip leaves the loss flat), and, with ``--mldev DIR`` (the
``cases/debugging/nan_losses/setup_workspace`` folder of an ML-Dev-Bench checkout, read
where it is, never copied into this repository), the benchmark's own ``train.py`` with its
own ``test_model.py`` as the judge. Printed per case: the status, the runs, the recipe
kept and those dropped, and whether the branch's losses are finite and falling (the
benchmark's criterion: last < middle < first, no NaN; for ``--mldev`` its test's exit code).

Usage: python benchmarks/bench_divergence.py [--mldev DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_scripts" / "divergence"
AUTOFIX = [sys.executable, "-m", "autofix"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def falls(losses: list[float]) -> bool:
    mid = len(losses) // 2
    return all(math.isfinite(x) for x in losses) and losses[-1] < losses[mid] < losses[0]


def branch_losses(repo: Path, script: str) -> list[float]:
    code = (f"import json, {Path(script).stem} as m; "
            "print('LOSSES', json.dumps(m.train()))")
    done = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True,
                          text=True, timeout=600)
    line = next((x for x in done.stdout.splitlines() if x.startswith("LOSSES")), "")
    return [float(x) for x in json.loads(line.split(" ", 1)[1])] if line else []


def case(name: str, files: dict[str, Path], script: str, judge: str = "") -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        for target, source in files.items():
            shutil.copy(source, repo / target)
        git(repo, "init", "-q", "-b", "main")
        git(repo, "-c", "user.name=bench", "-c", "user.email=b@x", "add", ".")
        git(repo, "-c", "user.name=bench", "-c", "user.email=b@x", "commit", "-qm", "case")
        start = time.monotonic()
        subprocess.run([*AUTOFIX, script, "--branch", "fixes", "--report", "../r.json"],
                       cwd=repo, capture_output=True, text=True, timeout=1800)
        seconds = time.monotonic() - start
        report = json.loads((Path(tmp) / "r.json").read_text())
        kept = ", ".join(f["recipe"] for f in report["fixes"]) or "-"
        dropped = ", ".join(d["recipe"] for d in report["dropped"]) or "-"
        verdict = "no branch"
        if report["fixes"]:
            git(repo, "checkout", "-q", "fixes")
            if judge:
                test = subprocess.run([sys.executable, judge], cwd=repo, capture_output=True,
                                      text=True, timeout=600)
                verdict = f"its own test: exit {test.returncode}"
            else:
                verdict = f"finite and falling: {falls(branch_losses(repo, script))}"
        print(f"{name}: {report['status']}, {len(report['runs'])} runs, kept {kept}, "
              f"dropped {dropped}; branch {verdict}; {seconds:.0f} s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mldev", type=Path, help="ML-Dev-Bench's nan_losses setup_workspace")
    options = parser.parse_args()
    case("unscaled inputs", {"train.py": SAMPLES / "unscaled_house_prices.py"}, "train.py")
    case("exploding gradients", {"train.py": SAMPLES / "exploding_delivery_times.py"},
         "train.py")
    if options.mldev:
        case("ML-Dev-Bench nan_losses", {"train.py": options.mldev / "train.py",
                                         "test_model.py": options.mldev / "test_model.py"},
             "train.py", judge="test_model.py")


if __name__ == "__main__":
    main()
