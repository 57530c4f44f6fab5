"""Bag-of-words text classifier (nn.EmbeddingBag with offsets) on templated sentences
tokenised by whitespace; a collate function builds the flat ids and offsets."""
import random

import torch
from torch import nn
from torch.utils.data import DataLoader

random.seed(16)
torch.manual_seed(16)
WORDS = {0: ["rain", "cloud", "storm", "cold"], 1: ["sun", "warm", "beach", "bright"]}
FILLER = ["today", "the", "is", "very", "quite", "outside", "we", "saw"]


def example():
    label = random.randint(0, 1)
    words = random.sample(FILLER, 3) + random.sample(WORDS[label], 2)
    random.shuffle(words)
    return " ".join(words), label


rows = [example() for _ in range(500)]
vocab = {w: i for i, w in enumerate(sorted({w for text, _ in rows for w in text.split()}))}


def collate(batch):
    ids, offsets, labels = [], [], []
    for text, label in batch:
        offsets.append(len(ids))
        ids += [vocab[w] for w in text.split()]
        labels.append(label)
    return torch.tensor(ids), torch.tensor(offsets), torch.tensor(labels)


class BagClassifier(nn.Module):
    def __init__(self, vocab_size, dim=16):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab_size, dim, mode="mean")
        self.fc = nn.Linear(dim, 2)

    def forward(self, ids, offsets):
        return self.fc(self.bag(ids, offsets))


model = BagClassifier(len(vocab))
optimizer = torch.optim.Adam(model.parameters(), lr=2e-2)
train_loader = DataLoader(rows[:400], batch_size=20, shuffle=True, collate_fn=collate)
test_loader = DataLoader(rows[400:], batch_size=50, collate_fn=collate)
for epoch in range(2):
    for ids, offsets, labels in train_loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(ids, offsets), labels)
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        correct = sum((model(i, o).argmax(1) == l).sum().item() for i, o, l in test_loader)
    print(f"epoch {epoch} loss {loss.item():.4f} accuracy {correct / 100:.2f}")
