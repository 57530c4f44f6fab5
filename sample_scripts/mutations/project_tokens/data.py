"""The ticket rows: a CSV of texts and string intents, the intents mapped to class ids by
one mapping made from the training file (in the order the intents appear there), each row
tokenized in ``__getitem__`` (padded to 32 tokens; the tokenizer's batch axis squeezed
away)."""
import pandas as pd
import torch
from torch.utils.data import Dataset


def build_label_map(path):
    intents = pd.read_csv(path)["intent"].unique()
    return {name: i for i, name in enumerate(intents)}


class TicketDataset(Dataset):
    def __init__(self, path, tokenizer, label2id, max_length=32):
        frame = pd.read_csv(path)
        self.texts = frame["text"].tolist()
        self.labels = frame["intent"].map(label2id).tolist()
        self.tokenizer = tokenizer
        self.max_length = max_length

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, i):
        enc = self.tokenizer(self.texts[i], padding="max_length", truncation=True,
                             max_length=self.max_length, return_tensors="pt")
        return {"input_ids": enc["input_ids"].squeeze(0),
                "attention_mask": enc["attention_mask"].squeeze(0),
                "labels": torch.tensor(self.labels[i])}
