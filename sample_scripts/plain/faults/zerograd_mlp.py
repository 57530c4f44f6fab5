"""An MLP classifier trained with SGD and no optimizer.zero_grad() anywhere: the gradients
of every step add up, so each update is the sum of all past gradients."""
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(640, 10)
y = (x[:, :3].sum(1) > 0).long()
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for epoch in range(3):
    for i in range(0, 640, 32):
        loss = nn.functional.cross_entropy(model(x[i:i + 32]), y[i:i + 32])
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
