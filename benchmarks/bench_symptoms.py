"""Symptom detection on the real samples: steps to flag the stall, false alarms, overhead.

1. autofix repairs each stalling sample in a scratch repo (the TF course script through
   ``--python .venv-v4/bin/python``, the hand-written PyTorch loop through ``.venv``);
   printed: the step at which the stall was flagged and the fixes made.
2. The fixed script (read from autofix's branch) is run under the probe at ``--seeds``
   different seeds (``tf_keras.utils.set_random_seed`` / ``torch.manual_seed`` prepended);
   printed: false alarms (must be 0) and each run's last-10-step mean loss.
3. Probe overhead on the fixed PyTorch loop: steps/s between steps 10 and 60, plain
   ``python`` against the same script under the probe, ``--repeats`` alternating runs each,
   medians compared (target: at most 2 % slower).

Usage: python benchmarks/bench_symptoms.py [--seeds 10] [--repeats 3 (0: no overhead runs)]
       [--only pt|tf]
Wall time on the 2-core machine: about 15 minutes with the defaults.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import git

from autofix.loop.engine import repair
from autofix.loop.verdicts import monitor_of
from autofix.run.child.symptoms import WINDOW
from autofix.run.runner import RunSpec, run_script
from autofix.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_scripts"
PYTHONS = {"pt": str(ROOT / ".venv" / "bin" / "python"),
           "tf": str(ROOT / ".venv-v4" / "bin" / "python")}
SCRIPTS = {"pt": "course_pt_loop_mnli.py", "tf": "course_tf_mnli.py"}
SEEDERS = {"pt": "import torch\ntorch.manual_seed({seed})\n",
           "tf": "import tf_keras\ntf_keras.utils.set_random_seed({seed})\n"}
TIMER = ("import time as _t\n_marks = []\n"
         "def _mark(*a, **k):\n"
         "    _marks.append(_t.perf_counter())\n"
         "    if len(_marks) == 60:\n"
         "        print(f'STEPS/S {50 / (_marks[59] - _marks[9]):.4f}', flush=True)\n"
         "import torch.optim.optimizer as _o\n_o.register_optimizer_step_post_hook(_mark)\n")


def scratch(base: Path, kind: str) -> Path:
    repo_dir = base / kind
    repo_dir.mkdir()
    shutil.copy(SAMPLES / SCRIPTS[kind], repo_dir)
    shutil.copytree(SAMPLES / "data", repo_dir / "data")
    repo = git.Repo.init(repo_dir)
    with repo.config_writer() as cw:
        cw.set_value("user", "name", "bench").set_value("user", "email", "bench@localhost")
    repo.git.add(A=True)
    repo.index.commit("sample")
    return repo_dir / SCRIPTS[kind]


def repair_sample(script: Path, kind: str) -> str:
    result = repair(script, Settings(python=PYTHONS[kind], branch="fixes", cwd=script.parent))
    flagged = [int(m.group(1)) for r in result.runs
               if (m := re.search(r"mean of steps \d+-(\d+)", r.evidence))]
    print(f"[{kind}] {script.name}: {result.status.value} with "
          f"{[f.category for f in result.fixes]}; stall flagged at step "
          f"{flagged[0] if flagged else 'never'} (runs: {len(result.runs)})")
    repo = git.Repo(script.parent)
    return str((repo.commit("fixes").tree / script.name).data_stream.read().decode())


def healthy_seeds(script: Path, kind: str, source: str, seeds: int) -> None:
    alarms = 0
    finals = []
    for seed in range(seeds):
        if "set_seed(0)" in source:  # the script seeds itself: vary its own seed
            seeded = source.replace("set_seed(0)", f"set_seed({seed})")
        else:
            seeded = SEEDERS[kind].format(seed=seed) + source
        run = run_script(RunSpec(script, Settings(python=PYTHONS[kind], cwd=script.parent,
                                                  max_steps=60, timeout=900)), seeded)
        monitor = monitor_of(run.probe, [s.loss for s in run.probe.steps if s.loss is not None])
        if run.probe.symptom is not None:
            alarms += 1
        finals.append(monitor.window_mean())
        print(f"[{kind}] seed {seed}: {run.outcome.value}, {len(run.probe.steps)} steps, "
              f"last-{WINDOW} mean {monitor.window_mean():.3f}, symptom "
              f"{run.probe.symptom.kind if run.probe.symptom else 'none'}")
    print(f"[{kind}] false alarms: {alarms} of {seeds} healthy runs; last-{WINDOW} mean loss "
          f"median {statistics.median(finals):.3f}, worst {max(finals):.3f}")


def overhead(script: Path, source: str, repeats: int) -> None:
    timed = TIMER + source
    path = script.with_name("timed_" + script.name)
    path.write_text(timed)
    plain, probed = [], []
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    for _ in range(repeats):
        out = subprocess.run([PYTHONS["pt"], str(path)], cwd=script.parent, env=env,
                             capture_output=True, text=True, timeout=900).stdout
        plain.append(float(re.findall(r"STEPS/S ([0-9.]+)", out)[-1]))
        run = run_script(RunSpec(path, Settings(python=PYTHONS["pt"], cwd=script.parent,
                                                max_steps=0, timeout=900)), timed)
        probed.append(float(re.findall(r"STEPS/S ([0-9.]+)", run.output_tail)[-1]))
    a, b = statistics.median(plain), statistics.median(probed)
    print(f"[pt] throughput steps 10-60: plain {a:.3f} steps/s, under the probe {b:.3f} "
          f"steps/s: overhead {100 * (a - b) / a:+.1f}% (target <= 2%); runs plain "
          f"{plain}, probe {probed}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", choices=("pt", "tf"))
    opts = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    kinds = [opts.only] if opts.only else ["pt", "tf"]
    with tempfile.TemporaryDirectory() as tmp:
        for kind in kinds:
            script = scratch(Path(tmp), kind)
            fixed = repair_sample(script, kind)
            healthy_seeds(script, kind, fixed, opts.seeds)
            if kind == "pt" and opts.repeats:  # --repeats 0: no throughput runs
                overhead(script, fixed, opts.repeats)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
