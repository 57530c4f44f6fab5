# FAULT (prompt-masked-labels-lm-collator), seeded into clm_loop.py:
# Prompt masking by hand (labels -100 on the prompt), then DataCollatorForLanguageModeling
# (mlm=False): it pads input_ids with tokenizer.pad, which cannot pad the ragged labels.
"""A hand-written causal-LM training loop (HF course, chapter 7 "Training a causal language
model", "Training with Accelerate" section, without Accelerate).

Tokenize the "text" column of data/instructions.jsonl, batch it with
DataCollatorForLanguageModeling(mlm=False) (it pads and copies input_ids to labels, with
-100 on the padding), and train with torch's AdamW and a linear schedule. The tokenizer
has no pad token (as Llama's): the course sets it to the eos token, which is harmless
here because the texts do not end with eos (see faults/pad-equals-eos-masks-eos.py).
Healthy: 30 optimizer steps, a few seconds on CPU.
Usage: python clm_loop.py [--lr 2e-3]
"""
import argparse
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    DataCollatorForLanguageModeling,
    get_scheduler,
)


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
torch.manual_seed(0)

here = Path(__file__).resolve().parent
candidates = (here / "data", here.parent / "data")
data_dir = next(p for p in candidates if (p / "instructions.jsonl").is_file())
raw = load_dataset("json", data_files=str(data_dir / "instructions.jsonl"), split="train")

model_path = tiny_llm()
tokenizer = AutoTokenizer.from_pretrained(model_path)
tokenizer.pad_token = tokenizer.eos_token
model = AutoModelForCausalLM.from_pretrained(model_path)


def tokenize(batch):
    enc = tokenizer(batch["text"], truncation=True, max_length=128)
    enc["labels"] = []
    for ids, prompt in zip(enc["input_ids"], batch["prompt"]):
        prompt_len = len(tokenizer(prompt).input_ids)
        enc["labels"].append([-100] * prompt_len + ids[prompt_len:])
    return enc


tokenized = raw.map(tokenize, batched=True, remove_columns=raw.column_names)
collator = DataCollatorForLanguageModeling(tokenizer, mlm=False)
train_dataloader = DataLoader(tokenized, shuffle=True, batch_size=16, collate_fn=collator)

num_training_steps = 30
optimizer = torch.optim.AdamW(model.parameters(), lr=cli.lr)
lr_scheduler = get_scheduler("linear", optimizer=optimizer, num_warmup_steps=0,
                             num_training_steps=num_training_steps)

model.train()
step = 0
while step < num_training_steps:
    for batch in train_dataloader:
        outputs = model(**batch)
        loss = outputs.loss
        loss.backward()
        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad()
        step += 1
        if step % 5 == 0 or step == 1:
            print(f"step {step}: loss {loss.item():.4f}")
        if step == num_training_steps:
            break
