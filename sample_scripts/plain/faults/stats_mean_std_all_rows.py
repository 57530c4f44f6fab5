"""Inputs standardised with the mean and std of all rows, then split into train and test:
the test rows' statistics leak into the training inputs."""
import torch
from torch import nn

torch.manual_seed(0)
x = torch.rand(500, 4) * torch.tensor([50.0, 2.0, 300.0, 1.0])
x[400:] += torch.tensor([20.0, 1.0, 100.0, 0.5])
y = (x * torch.tensor([0.1, -1.0, 0.01, 2.0])).sum(1, keepdim=True)
x = (x - x.mean(dim=0)) / x.std(dim=0)
x_train, y_train, x_test, y_test = x[:400], y[:400], x[400:], y[400:]
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(4):
    for i in range(0, 400, 40):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x_train[i:i + 40]), y_train[i:i + 40])
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        test_mse = nn.functional.mse_loss(model(x_test), y_test).item()
    print(f"epoch {epoch} train {loss.item():.4f} test {test_mse:.4f}")
