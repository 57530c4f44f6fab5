"""A causal language model fine-tuned with the transformers Trainer on question/answer texts:
the tiny Llama of scripts/make_tiny_llm.py ($AUTOFIX_TINY_LLM_BASE), each text ended with
the end-of-text token so the model learns to stop, batched by
DataCollatorForLanguageModeling(mlm=False), which masks the padding in the labels. The
tokenizer has no pad token: it pads with its unknown token, which the texts never hold.

Prints ``val stop acc X``: the share of held-out texts after which the model's most likely
next token is end-of-text. 36 optimizer steps, a few seconds.
"""
import os
import sys
import tempfile
from pathlib import Path

import torch
from datasets import load_dataset
from transformers import (AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling,
                          Trainer, TrainingArguments)

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "data"


def tiny_llm():
    """The tiny Llama's folder: $AUTOFIX_TINY_LLM_BASE, else built by scripts/make_tiny_llm.py."""
    if os.environ.get("AUTOFIX_TINY_LLM_BASE"):
        return os.environ["AUTOFIX_TINY_LLM_BASE"]
    maker = next(p / "scripts" for p in HERE.parents if (p / "scripts/make_tiny_llm.py").is_file())
    sys.path.insert(0, str(maker))
    from make_tiny_llm import build

    return str(build(tempfile.mkdtemp(), chat_template=False))


torch.manual_seed(0)
raw = load_dataset("json", data_files=str(DATA / "instructions.jsonl"), split="train")
raw = raw.train_test_split(test_size=20, seed=0)
checkpoint = tiny_llm()
tokenizer = AutoTokenizer.from_pretrained(checkpoint)
tokenizer.pad_token = tokenizer.unk_token
model = AutoModelForCausalLM.from_pretrained(checkpoint)


def tokenize(batch):
    return tokenizer([text + tokenizer.eos_token for text in batch["text"]], truncation=True,
                     max_length=64)


tokenized = raw.map(tokenize, batched=True, remove_columns=raw["train"].column_names)
args = TrainingArguments(output_dir=tempfile.mkdtemp(), learning_rate=2e-3,
                         per_device_train_batch_size=16, num_train_epochs=3,
                         save_strategy="no", logging_steps=5, report_to="none", seed=0)
trainer = Trainer(model=model, args=args, train_dataset=tokenized["train"],
                  data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False))
trainer.train()

model.eval()
stops = 0
with torch.no_grad():
    for text in raw["test"]["text"]:
        ids = tokenizer(text, return_tensors="pt")["input_ids"]
        stops += int(model(input_ids=ids).logits[0, -1].argmax()) == tokenizer.eos_token_id
print(f"val stop acc {stops / len(raw['test']):.3f}")
