"""Whitespace-tokenised sentences padded into a numpy array made with ``np.zeros`` (float64
by default) and fed to an ``nn.Embedding``: ``Expected tensor for argument #1 'indices' to
have one of the following scalar types: Long, Int; but got torch.DoubleTensor``."""
import numpy as np
import torch
from torch import nn

WORDS = ["good", "great", "fine", "bad", "awful", "poor", "the", "film", "was", "very"]
rng = np.random.default_rng(2)


def sentence(positive):
    mood = WORDS[:3] if positive else WORDS[3:6]
    return ["the", "film", "was", "very", str(rng.choice(mood))]


def encode(sentences, length=6):
    vocab = {w: i + 1 for i, w in enumerate(WORDS)}
    ids = np.zeros((len(sentences), length))
    for row, words in enumerate(sentences):
        ids[row, :len(words)] = [vocab[w] for w in words]
    return ids


labels = rng.integers(0, 2, size=200)
ids = torch.from_numpy(encode([sentence(bool(p)) for p in labels]))
targets = torch.from_numpy(labels)


class BagOfWords(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(len(WORDS) + 1, 16, padding_idx=0)
        self.out = nn.Linear(16, 2)

    def forward(self, batch):
        return self.out(self.embed(batch).mean(1))


model = BagOfWords()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(3):
    for i in range(0, 200, 20):
        loss = nn.functional.cross_entropy(model(ids[i:i + 20]), targets[i:i + 20])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
