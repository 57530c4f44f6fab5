"""Linear regression with SGD and an ExponentialLR schedule; the gradients are never
zeroed, neither on the optimizer nor on the model."""
import torch
from torch import nn

torch.manual_seed(2)
x = torch.randn(400, 5)
y = x @ torch.randn(5, 1) + 1.0
model = nn.Linear(5, 1)
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.9)
for epoch in range(5):
    for i in range(0, 400, 40):
        loss = criterion(model(x[i:i + 40]), y[i:i + 40])
        loss.backward()
        optimizer.step()
    scheduler.step()
    print(f"epoch {epoch} mse {loss.item():.4f}")
