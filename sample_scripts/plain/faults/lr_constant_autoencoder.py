"""An autoencoder trained with SGD at a module constant LEARNING_RATE = 20.0."""
import torch
from torch import nn

LEARNING_RATE = 20.0

torch.manual_seed(2)
data = torch.randn(400, 3) @ torch.randn(3, 12)
model = nn.Sequential(nn.Linear(12, 6), nn.Tanh(), nn.Linear(6, 12))
optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
for epoch in range(5):
    for i in range(0, 400, 40):
        batch = data[i:i + 40]
        loss = nn.functional.mse_loss(model(batch), batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4g}")
