"""MLP with BatchNorm1d and dropout, evaluated after every epoch: model.eval() before the
evaluation, model.train() at the top of each epoch."""
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(10, 64), nn.BatchNorm1d(64), nn.ReLU(),
                                    nn.Dropout(0.25), nn.Linear(64, 4))

    def forward(self, x):
        return self.layers(x)


torch.manual_seed(14)
means = torch.randn(4, 10) * 2
y = torch.randint(0, 4, (720,))
x = means[y] + torch.randn(720, 10)
net = Net()
optimizer = torch.optim.Adam(net.parameters(), lr=5e-3)
for epoch in range(3):
    net.train()
    perm = torch.randperm(600)
    for i in range(0, 600, 40):
        idx = perm[i:i + 40]
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(net(x[idx]), y[idx])
        loss.backward()
        optimizer.step()
    net.eval()
    with torch.no_grad():
        val_loss = nn.functional.cross_entropy(net(x[600:]), y[600:]).item()
        val_acc = (net(x[600:]).argmax(1) == y[600:]).float().mean().item()
    print(f"epoch {epoch} train {loss.item():.3f} val {val_loss:.3f} acc {val_acc:.3f}")
