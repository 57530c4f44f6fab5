# FAULT (chat-template-missing), seeded into sft_chat.py:
# SFT on conversational rows with a base tokenizer that has no chat template (the base
# variant of the tiny model: AUTOFIX_TINY_LLM_BASE, built with --no-chat-template).
"""Supervised fine-tuning on conversations with TRL's SFTTrainer (TRL docs style).

data/chat.jsonl holds conversational rows ({"messages": [{"role", "content"}, ...]}):
SFTTrainer renders each one with the tokenizer's chat template (a Zephyr-like one,
"<|user|>\n...</s>\n<|assistant|>\n...</s>\n") and trains on the whole conversation.
The model is given by its folder, as in the TRL docs (model="Qwen/..."): SFTTrainer loads
the model and, since no processing_class is passed, the tokenizer from the same folder.
Healthy: 30 optimizer steps, a few seconds on CPU.
Usage: python sft_chat.py [--lr 2e-3]
"""
import argparse
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

from datasets import load_dataset
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
cli = parser.parse_args()

here = Path(__file__).resolve().parent
candidates = (here / "data", here.parent / "data")
data_dir = next(p for p in candidates if (p / "chat.jsonl").is_file())
dataset = load_dataset("json", data_files=str(data_dir / "chat.jsonl"), split="train")

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
    model=tiny_llm(base=True),
    args=training_args,
    train_dataset=dataset,
)
trainer.train()
