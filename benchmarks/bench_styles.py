"""autofix on the practitioners'-style scripts in ``sample_scripts/styles`` (and the two
shared cases in ``sample_scripts/cases``): fixed/total and fixes that broke the script.

Each script is copied with the data it reads into its own scratch git repo (layout:
``styles/<script>`` next to ``data/``, as in ``sample_scripts``) and repaired with the real
CLI. "Fixed" means exit 0 and the branch's script trains: autofix's own last run reached
the step budget (or ended) without an error. "Broke the script" counts commits after
which the next run failed with an error the fix introduced (NameError, TypeError,
SyntaxError, ImportError raised at a line of the script).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_styles.py [--max-steps 10] [NAME...]
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
SAMPLES = ROOT / "sample_scripts"
AUTOFIX = [sys.executable, "-m", "autofix"]
_BROKEN = ("NameError", "TypeError", "SyntaxError", "ImportError", "UnboundLocalError")


def scripts(names: list[str]) -> list[Path]:
    """The style scripts and notebooks, then the two shared cases of issue 7
    (``cases/functions_*.py``; the other cases belong to ``bench_corpus.py``), filtered by
    ``names``."""
    found = sorted((SAMPLES / "styles").glob("s*.py")) + \
        sorted((SAMPLES / "styles").glob("s*.ipynb")) + \
        sorted((SAMPLES / "cases").glob("functions_*.py"))
    return [p for p in found if not names or any(n in p.name for n in names)]


def make_repo(script: Path, where: Path) -> Path:
    """A scratch git repo holding ``script`` under its folder name, and its data."""
    folder = where / script.parent.name
    folder.mkdir(parents=True)
    shutil.copy(script, folder / script.name)
    data = script.parent / "data"  # the cases read data/ from the cwd, the styles ../data
    shutil.copytree(data if data.is_dir() else SAMPLES / "data", where / "data")
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
    for cmd in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-qm", "x"]):
        subprocess.run(cmd, cwd=where, check=True, env=env)
    return folder / script.name


def run_one(script: Path, max_steps: int) -> dict[str, object]:
    """Repair ``script`` in a scratch repo; returns its row of figures."""
    with tempfile.TemporaryDirectory(prefix="bench-styles-") as tmp:
        target = make_repo(script, Path(tmp))
        report = Path(tmp) / "report.json"
        start = time.perf_counter()
        proc = subprocess.run(
            [*AUTOFIX, str(target.relative_to(tmp)), "--max-steps", str(max_steps),
             "--branch", "fixes", "--report", str(report), "--timeout", "900"],
            cwd=tmp, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        seconds = time.perf_counter() - start
        data = json.loads(report.read_text()) if report.exists() else {}
    runs = data.get("runs", [])
    fixes = data.get("fixes", [])
    broke = 0
    for before, after in zip(runs, runs[1:], strict=False):
        if before.get("recipe") and any(e in str(after.get("evidence", ""))
                                        for e in _BROKEN):
            broke += 1
    last = runs[-1] if runs else {}
    trained = proc.returncode == 0 and last.get("outcome") in ("ok", "budget")
    return {"script": script.name, "rc": proc.returncode, "fixed": trained,
            "fixes": [f.get("recipe") for f in fixes], "broke": broke,
            "seconds": round(seconds), "status": data.get("status", proc.stderr[-300:])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="only scripts whose name contains one")
    parser.add_argument("--max-steps", type=int, default=10)
    args = parser.parse_args(argv)
    rows = []
    for script in scripts(args.names):
        row = run_one(script, args.max_steps)
        rows.append(row)
        print(f"{row['script']:36} rc={row['rc']} fixed={row['fixed']} "
              f"fixes={row['fixes']} broke={row['broke']} {row['seconds']} s", flush=True)
    fixed = sum(1 for r in rows if r["fixed"])
    broke = sum(int(str(r["broke"])) for r in rows)
    print(f"fixed: {fixed}/{len(rows)}")
    print(f"fixes that broke the script: {broke}")
    return 0 if fixed == len(rows) and not broke else 1


if __name__ == "__main__":
    sys.exit(main())
