"""Dropout MLP with an evaluate() that switches to eval mode and back to train mode;
evaluation every epoch through a DataLoader without shuffling."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(7)
w = torch.randn(16, 3)
x = torch.randn(900, 16)
y = (x @ w).argmax(1)
train_ds = TensorDataset(x[:750], y[:750])
test_ds = TensorDataset(x[750:], y[750:])
train_loader = DataLoader(train_ds, batch_size=50, shuffle=True)
test_loader = DataLoader(test_ds, batch_size=50, shuffle=False)

model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Dropout(0.3), nn.Linear(64, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for xb, yb in loader:
            correct += (model(xb).argmax(dim=-1) == yb).sum().item()
            total += len(yb)
    model.train()
    return correct / total


for epoch in range(3):
    for xb, yb in train_loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.3f}, accuracy {evaluate(model, test_loader):.3f}")
