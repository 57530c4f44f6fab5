"""An MLP whose second Linear expects 32 inputs while the first gives 64."""
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(320, 10)
y = (x[:, 0] > 0).long()
model = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(32, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for i in range(0, 320, 32):
    loss = nn.functional.cross_entropy(model(x[i:i + 32]), y[i:i + 32])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"loss {loss.item():.4f}")
