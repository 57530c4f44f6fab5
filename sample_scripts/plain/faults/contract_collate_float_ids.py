"""Character ids padded in a ``collate_fn`` with ``torch.Tensor`` (float32), given to an
``nn.Embedding``: the embedding takes integer indices."""
import random

import torch
from torch import nn
from torch.utils.data import DataLoader

random.seed(0)
ALPHABET = "abcdefghij"
words = ["".join(random.choice(ALPHABET[:5] if k % 2 else ALPHABET[5:])
                 for _ in range(random.randint(3, 7))) for k in range(240)]
rows = [([ALPHABET.index(c) + 1 for c in w], k % 2) for k, w in enumerate(words)]


def collate(batch):
    width = max(len(ids) for ids, _ in batch)
    ids = torch.Tensor([ids + [0] * (width - len(ids)) for ids, _ in batch])
    return ids, torch.tensor([label for _, label in batch])


class CharBag(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(len(ALPHABET) + 1, 8, padding_idx=0)
        self.head = nn.Linear(8, 2)

    def forward(self, ids):
        return self.head(self.embed(ids).mean(1))


torch.manual_seed(0)
model = CharBag()
opt = torch.optim.Adam(model.parameters(), lr=2e-2)
for epoch in range(3):
    for ids, y in DataLoader(rows, batch_size=24, shuffle=True, collate_fn=collate):
        loss = nn.functional.cross_entropy(model(ids), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
