"""Direct preference optimization with TRL's DPOTrainer (TRL DPO docs style).

data/preference.jsonl holds preference rows ({"prompt", "chosen", "rejected"}). With no
ref_model given, DPOTrainer uses a frozen copy of the model as the reference. The DPO loss
starts at ln 2 = 0.693 (policy = reference) and falls as the chosen answers gain on the
rejected ones.
Healthy: 30 optimizer steps, a few seconds on CPU.
Usage: python dpo.py [--lr 1e-3]
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
from trl import DPOConfig, DPOTrainer


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
parser.add_argument("--lr", type=float, default=1e-3)
cli = parser.parse_args()

here = Path(__file__).resolve().parent
candidates = (here / "data", here.parent / "data")
data_dir = next(p for p in candidates if (p / "preference.jsonl").is_file())
train_dataset = load_dataset("json", data_files=str(data_dir / "preference.jsonl"), split="train")

model_path = tiny_llm()
tokenizer = AutoTokenizer.from_pretrained(model_path)
model = AutoModelForCausalLM.from_pretrained(model_path)

training_args = DPOConfig(
    output_dir=tempfile.mkdtemp(),
    max_steps=30,
    per_device_train_batch_size=8,
    learning_rate=cli.lr,
    beta=0.1,
    max_length=128,
    logging_steps=5,
    save_strategy="no",
    report_to="none",
    bf16=False,  # DPOConfig defaults to bf16=True, which fails on a machine without a GPU
    seed=0,
)
trainer = DPOTrainer(
    model=model,
    args=training_args,
    train_dataset=train_dataset,
    processing_class=tokenizer,
)
trainer.train()
