"""A running loss total kept as a tensor (total_loss += loss) and the backward taken
through the total: the second step backpropagates through the first step's freed graph."""
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(320, 8)
y = (x[:, :2].sum(1) > 0).long()
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
total_loss = 0
for step, i in enumerate(range(0, 320, 32)):
    loss = nn.functional.cross_entropy(model(x[i:i + 32]), y[i:i + 32])
    total_loss += loss
    optimizer.zero_grad()
    total_loss.backward()
    optimizer.step()
    print(f"step {step} mean loss {total_loss.item() / (step + 1):.4f}")
