"""The evaluation DataLoader shuffles, but every prediction is compared with the labels of
its own batch, so the order does not matter (a correct use of shuffle=True in evaluation)."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(11)
x = torch.randn(800, 6)
y = (x.sum(1) > 0).long()
train_loader = DataLoader(TensorDataset(x[:640], y[:640]), batch_size=32, shuffle=True)
eval_loader = DataLoader(TensorDataset(x[640:], y[640:]), batch_size=32, shuffle=True)

model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(2):
    model.train()
    for xb, yb in train_loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        optimizer.step()
    model.eval()
    predictions, labels = [], []
    with torch.no_grad():
        for xb, yb in eval_loader:
            predictions.append(model(xb).argmax(1))
            labels.append(yb)
    accuracy = (torch.cat(predictions) == torch.cat(labels)).float().mean().item()
    print(f"epoch {epoch} accuracy {accuracy:.3f}")
