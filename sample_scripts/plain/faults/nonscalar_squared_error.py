"""A regression loss written by hand as the squared error per row, never averaged, then
backward() on it."""
import torch
from torch import nn


def squared_error(pred, target):
    return (pred - target) ** 2


def main():
    torch.manual_seed(2)
    x = torch.randn(200, 3)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5]])
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(20):
        optimizer.zero_grad()
        loss = squared_error(model(x), y)
        loss.backward()
        optimizer.step()
        print(step, loss.mean().item())


if __name__ == "__main__":
    main()
