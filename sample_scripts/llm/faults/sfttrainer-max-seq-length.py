# FAULT (sfttrainer-max-seq-length), seeded into sft_instructions.py:
# max_seq_length given to SFTTrainer (TRL < 0.13 style); today it is SFTConfig's max_length.
"""Supervised fine-tuning on instruction rows with TRL's SFTTrainer (TRL quickstart style).

The rows in data/instructions.jsonl are prompt-completion pairs ("Question: ...\nAnswer:"
/ " 7"); SFTTrainer tokenizes them, appends eos and, for this format, computes the loss on
the completion tokens only (completion_only_loss defaults to True for prompt-completion
rows). With --text it trains on the plain "text" column (loss on every token).
The model is the tiny Llama-style test model (see tiny_llm below): being tiny, it needs a
far larger learning rate than a real checkpoint (2e-5 there).
Healthy: 30 optimizer steps, a few seconds on CPU; the loss on the completions falls
from 4.1 to ~2.5.
Usage: python sft_instructions.py [--lr 2e-3] [--text]
"""
import argparse
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer
from trl import SFTConfig, SFTTrainer


def tiny_llm(base: bool = False) -> str:
    """Folder of the tiny Llama-style test model: $AUTOFIX_TINY_LLM ($AUTOFIX_TINY_LLM_BASE:
    the base variant, no chat template), else built once by scripts/make_tiny_llm.py."""
    name = "AUTOFIX_TINY_LLM_BASE" if base else "AUTOFIX_TINY_LLM"
    if os.environ.get(name):
        return os.environ[name]
    here = Path(__file__).resolve().parent
    folders = (here, *here.parents, Path.cwd(), *Path.cwd().parents)
    makers = [folder / "scripts" / "make_tiny_llm.py" for folder in folders]
    maker = next((m for m in makers if m.is_file()), None)
    if maker is None:
        raise SystemExit(f"set {name} to a folder made by scripts/make_tiny_llm.py")
    stamp = hashlib.sha1(maker.read_bytes()).hexdigest()[:10]
    out = Path(tempfile.gettempdir()) / f"tiny-llm-{'base-' if base else ''}{stamp}"
    if not (out / "config.json").is_file():
        sys.path.insert(0, str(maker.parent))
        from make_tiny_llm import build

        built = build(tempfile.mkdtemp(dir=out.parent), chat_template=not base)
        try:
            built.rename(out)  # atomic: a concurrent run sees all files or none
        except OSError:
            shutil.rmtree(built, ignore_errors=True)
    return str(out)


parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=2e-3)
parser.add_argument("--text", action="store_true", help="train on the plain 'text' column")
cli = parser.parse_args()

here = Path(__file__).resolve().parent
candidates = (here / "data", here.parent / "data")
data_dir = next(p for p in candidates if (p / "instructions.jsonl").is_file())
dataset = load_dataset("json", data_files=str(data_dir / "instructions.jsonl"), split="train")
if cli.text:
    dataset = dataset.remove_columns(["prompt", "completion"])  # language-modeling rows
else:
    dataset = dataset.remove_columns(["text"])  # prompt-completion rows

model_path = tiny_llm()
tokenizer = AutoTokenizer.from_pretrained(model_path)
model = AutoModelForCausalLM.from_pretrained(model_path)

training_args = SFTConfig(
    output_dir=tempfile.mkdtemp(),
    max_steps=30,
    per_device_train_batch_size=16,
    learning_rate=cli.lr,
    max_length=128,
    logging_steps=5,
    save_strategy="no",
    report_to="none",
    bf16=False,  # SFTConfig defaults to bf16=True, which fails on a machine without a GPU
    seed=0,
)
trainer = SFTTrainer(
    model=model,
    args=training_args,
    train_dataset=dataset,
    processing_class=tokenizer,
    max_seq_length=128,
)
trainer.train()
