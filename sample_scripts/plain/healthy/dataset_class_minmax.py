"""A torch Dataset subclass whose min-max scaling comes from the training rows (passed to
the test set); a validation loss computed every epoch in a helper, L1 loss."""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Rows(Dataset):
    def __init__(self, x, y, lo=None, hi=None):
        self.lo = x.min(0).values if lo is None else lo
        self.hi = x.max(0).values if hi is None else hi
        self.x = (x - self.lo) / (self.hi - self.lo)
        self.y = y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def validation_loss(model, loader):
    model.eval()
    with torch.no_grad():
        losses = [nn.functional.l1_loss(model(xb), yb).item() for xb, yb in loader]
    model.train()
    return sum(losses) / len(losses)


torch.manual_seed(21)
x = torch.rand(500, 4) * torch.tensor([1000.0, 1.0, 50.0, 5.0])
y = (x / torch.tensor([1000.0, 1.0, 50.0, 5.0])).sum(1, keepdim=True)
train = Rows(x[:400], y[:400])
test = Rows(x[400:], y[400:], train.lo, train.hi)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
loader = DataLoader(train, batch_size=40, shuffle=True)
for epoch in range(4):
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = nn.functional.l1_loss(model(xb), yb)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f} val {validation_loss(model, DataLoader(test, 50)):.4f}")
