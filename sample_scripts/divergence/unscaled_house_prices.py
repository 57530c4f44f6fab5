"""Price per flat from its floor area and its number of rooms: a linear model trained by
full-batch gradient descent on the raw features (area in square metres, up to 240)."""

import torch
from torch import nn

torch.manual_seed(0)

area = torch.linspace(25.0, 240.0, 64)
rooms = torch.round(area / 35.0) + 1.0
features = torch.stack([area, rooms], dim=1)
price = 3.2 * area + 12.0 * rooms + 40.0 + torch.randn(64) * 5.0

model = nn.Linear(2, 1)
loss_fn = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)


def train(epochs=30):
    history = []
    for epoch in range(epochs):
        optimizer.zero_grad()
        prediction = model(features).squeeze(1)
        loss = loss_fn(prediction, price)
        loss.backward()
        optimizer.step()
        history.append(loss.item())
        print(f"epoch {epoch + 1}: loss {history[-1]:.4g}")
    return history


if __name__ == "__main__":
    train()
