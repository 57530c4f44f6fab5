"""Gradient accumulation over 4 micro-batches: the loss divided by 4, the optimizer stepped
and the gradients zeroed every 4th micro-batch."""
import torch
from torch import nn

torch.manual_seed(20)
x = torch.randn(768, 8)
y = x @ torch.randn(8, 1) + 0.5
model = nn.Sequential(nn.Linear(8, 32), nn.SiLU(), nn.Linear(32, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
ACCUMULATE = 4

optimizer.zero_grad()
for i, start in enumerate(range(0, 768, 8)):
    loss = nn.functional.mse_loss(model(x[start:start + 8]), y[start:start + 8]) / ACCUMULATE
    loss.backward()
    if (i + 1) % ACCUMULATE == 0:
        optimizer.step()
        optimizer.zero_grad()
    if i % 16 == 15:
        print(f"micro-batch {i + 1} loss {loss.item() * ACCUMULATE:.4f}")
