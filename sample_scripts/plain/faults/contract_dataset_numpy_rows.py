"""A Dataset whose rows are numpy float64 vectors turned into tensors in ``__getitem__``
with ``torch.from_numpy``; the model is float32."""
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Points(Dataset):
    def __init__(self, n, seed):
        rng = np.random.RandomState(seed)
        self.x = rng.uniform(-1, 1, size=(n, 3))
        self.y = (np.linalg.norm(self.x, axis=1) > 0.9).astype(np.int64)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return torch.from_numpy(self.x[i]), torch.tensor(self.y[i])


def train(model, loader, epochs=4):
    opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
        print(f"epoch {epoch} loss {loss.item():.4f}")


torch.manual_seed(0)
train(nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 2)),
      DataLoader(Points(320, 0), batch_size=32, shuffle=True))
