"""The ticket rows and their batching: a ``Dataset`` of (text, class id) pairs read from a
jsonl file, and a ``collate_fn`` that tokenizes a batch of texts, padded to its longest."""
import json

import torch
from torch.utils.data import Dataset


class TicketDataset(Dataset):
    def __init__(self, path):
        with open(path) as f:
            self.rows = [json.loads(line) for line in f]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return self.rows[i]["text"], self.rows[i]["label"]

    @property
    def labels(self):
        return [row["label"] for row in self.rows]


def make_collate(tokenizer, max_length=32):
    def collate_fn(items):
        texts, labels = zip(*items)
        enc = tokenizer(list(texts), padding=True, truncation=True, max_length=max_length,
                        return_tensors="pt")
        return enc["input_ids"], enc["attention_mask"], torch.tensor(labels, dtype=torch.long)

    return collate_fn
