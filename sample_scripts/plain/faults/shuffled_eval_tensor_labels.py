"""An evaluation DataLoader with shuffle=True whose concatenated predictions are compared
with the dataset's labels in their stored order: the accuracy drops to chance."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
x = torch.randn(800, 6)
y = (x.sum(1) > 0).long()
train_loader = DataLoader(TensorDataset(x[:640], y[:640]), batch_size=32, shuffle=True)
test_set = TensorDataset(x[640:], y[640:])
test_loader = DataLoader(test_set, batch_size=32, shuffle=True)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(2):
    model.train()
    for xb, yb in train_loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        optimizer.step()
model.eval()
with torch.no_grad():
    predictions = torch.cat([model(xb).argmax(1) for xb, _ in test_loader])
print("accuracy", (predictions == test_set.tensors[1]).float().mean().item())
