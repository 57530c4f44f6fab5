"""Delivery time in seconds from eight standardised order features: a small MLP trained
with SGD on mini-batches of a TensorDataset."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

features = torch.randn(512, 8)
seconds = features @ torch.randn(8, 1) * 40.0 + 300.0
loader = DataLoader(TensorDataset(features, seconds), batch_size=64, shuffle=False)

net = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 1))
optimizer = torch.optim.SGD(net.parameters(), lr=0.01)


def train(epochs=8):
    losses = []
    for epoch in range(epochs):
        for xb, yb in loader:
            loss = nn.functional.mse_loss(net(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        print(f"epoch {epoch + 1}: last loss {losses[-1]:.4g}")
    return losses


if __name__ == "__main__":
    train()
