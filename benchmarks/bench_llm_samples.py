"""The language-model samples through autofix: the healthy ones and their seeded faults.

Every script of ``sample_scripts/llm/`` (healthy: expected clean, no finding) and of
``sample_scripts/llm/faults/`` (one fault seeded into a copy of a sample; a file named
``nofault-*`` trains on the installed stack and is expected clean) is copied with
``sample_scripts/llm/data`` into its own scratch git repository and repaired by the real CLI
on the tiny Llama of ``scripts/make_tiny_llm.py`` (built once, passed as
``AUTOFIX_TINY_LLM`` / ``AUTOFIX_TINY_LLM_BASE``). Per script:

- clean: exit 0, status clean, no finding (what a healthy script must get);
- fixed: exit 0, status fixed (autofix's last run trained);
- advised: no commit, and the last run names a category (the cause and the change, as
  advice);
- silent: status clean on a faulty script (nothing found: the worst outcome);
- other: anything else (``unknown``, an error).

Printed: one row per script (outcome, status, commits, the final category, findings), then
the totals and the wall time.

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/bench_llm_samples.py \\
        [--only empty-completion sft_chat] [--max-steps 5]
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

from bench_corpus import tiny_models

ROOT = Path(__file__).resolve().parent.parent
LLM = ROOT / "sample_scripts" / "llm"


def scripts() -> list[Path]:
    return sorted(LLM.glob("*.py")) + sorted((LLM / "faults").glob("*.py"))


def healthy(script: Path) -> bool:
    return script.parent == LLM or script.name.startswith("nofault-")


def run_one(script: Path, max_steps: int, timeout: float, models: dict[str, str]
            ) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="bench-llm-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        shutil.copy(script, repo / script.name)
        shutil.copytree(LLM / "data", repo / "data")
        git = ["git", "-C", str(repo)]
        subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
        subprocess.run([*git, "add", "."], check=True)
        subprocess.run([*git, "-c", "user.name=bench", "-c", "user.email=b@b", "commit",
                        "-q", "-m", "sample"], check=True)
        report = Path(tmp) / "report.json"
        env = {**os.environ, **models, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
               "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "autofix", script.name, "--branch", "bench",
             "--max-steps", str(max_steps), "--timeout", str(timeout), "--report", str(report)],
            cwd=repo, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
        seconds = time.perf_counter() - start
        doc = json.loads(report.read_text()) if report.is_file() else {}
    runs = doc.get("runs", [])
    status = doc.get("status", "error")
    recipes = [f["recipe"] for f in doc.get("fixes", [])]
    final = (runs[-1].get("category") or "") if runs else ""
    findings = [f.get("kind", "?") for f in doc.get("findings", [])]
    if healthy(script):
        outcome = "clean" if done.returncode == 0 and status == "clean" and not findings \
            else "FALSE-ALARM"
    elif done.returncode == 0 and status == "fixed":
        outcome = "fixed"
    elif status == "clean" and not findings:
        outcome = "SILENT"
    elif not recipes and (final not in ("", "unknown") or findings):
        outcome = "advised"
    else:
        outcome = "other"
    return {"script": script.stem, "outcome": outcome, "status": status,
            "exit": done.returncode, "recipes": recipes, "final": final,
            "findings": findings, "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, help="script stems to run")
    parser.add_argument("--max-steps", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--json", type=Path, default=None, help="write the rows here")
    opts = parser.parse_args()
    selected = [s for s in scripts() if not opts.only or s.stem in opts.only]
    start = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-llm-models-") as models_dir:
        models = tiny_models(Path(models_dir))
        print(f"{'script':44} {'outcome':11} {'status':8} {'exit':4} {'commits / final':40}")
        for script in selected:
            row = run_one(script, opts.max_steps, opts.timeout, models)
            rows.append(row)
            what = ",".join(row["recipes"]) or row["final"] or "-"  # type: ignore[arg-type]
            if row["findings"]:
                what += " findings=" + ",".join(row["findings"])  # type: ignore[arg-type]
            print(f"{row['script']:44} {row['outcome']:11} {row['status']:8} "
                  f"{row['exit']:4} {what:40} {row['seconds']:5.0f}s", flush=True)
    counts: dict[str, int] = {}
    for row in rows:
        counts[str(row["outcome"])] = counts.get(str(row["outcome"]), 0) + 1
    print()
    print(f"scripts: {len(rows)} ({sum(healthy(s) for s in selected)} expected clean); "
          + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    print(f"time: {time.perf_counter() - start:.0f} s wall")
    if opts.json:
        opts.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
