"""Exam score from eight standardised study features: a small MLP trained with plain SGD
at a rate far too high for it (10.0). A tenth of it (1.0) still diverges; a hundredth
(0.1) trains."""

import torch
from torch import nn

torch.manual_seed(0)

features = torch.randn(512, 8)
scores = features @ torch.randn(8, 1) + 0.1 * torch.randn(512, 1)

model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=10.0)
loss_fn = nn.MSELoss()


def train(epochs=6):
    losses = []
    for epoch in range(epochs):
        for start in range(0, 512, 32):
            xb, yb = features[start:start + 32], scores[start:start + 32]
            loss = loss_fn(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        print(f"epoch {epoch + 1}: last loss {losses[-1]:.4g}")
    return losses


if __name__ == "__main__":
    train()
