"""Token ids kept in a Dataset as a float tensor (``.float()`` to normalise them with the
features) and given to an ``nn.Embedding``."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Sequences(Dataset):
    def __init__(self, n=200, length=8, vocab=30):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(1, vocab, (n, length), generator=g).float()
        self.labels = (self.ids[:, 0] > vocab / 2).long()

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"ids": self.ids[i], "label": self.labels[i]}


class Model(nn.Module):
    def __init__(self, vocab=30):
        super().__init__()
        self.embed = nn.Embedding(vocab, 16)
        self.out = nn.Linear(16, 2)

    def forward(self, ids):
        return self.out(self.embed(ids).mean(1))


torch.manual_seed(0)
model = Model()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(3):
    for batch in DataLoader(Sequences(), batch_size=20, shuffle=True):
        loss = nn.functional.cross_entropy(model(batch["ids"]), batch["label"])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
