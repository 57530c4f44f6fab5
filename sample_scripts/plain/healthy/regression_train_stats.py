"""Regression with an MLP: inputs standardised with the mean and std of the training rows
only, a separate evaluate() function, SGD with momentum."""
import torch
from torch import nn

torch.manual_seed(4)
x = torch.rand(500, 6) * torch.tensor([100.0, 5.0, 1.0, 30.0, 2.0, 10.0])
y = (x * torch.tensor([0.02, 0.3, -1.0, 0.05, 0.5, -0.1])).sum(1, keepdim=True) + 0.1 * torch.randn(500, 1)
perm = torch.randperm(500)
train_idx, test_idx = perm[:400], perm[400:]
mean, std = x[train_idx].mean(0), x[train_idx].std(0)
x = (x - mean) / std
x_train, y_train, x_test, y_test = x[train_idx], y[train_idx], x[test_idx], y[test_idx]

model = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)


def evaluate(net, inputs, targets):
    net.eval()
    with torch.no_grad():
        return nn.functional.mse_loss(net(inputs), targets).item()


for epoch in range(5):
    model.train()
    for i in range(0, 400, 40):
        pred = model(x_train[i:i + 40])
        loss = nn.functional.mse_loss(pred, y_train[i:i + 40])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} train mse {loss.item():.4f} test mse {evaluate(model, x_test, y_test):.4f}")
