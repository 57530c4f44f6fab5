"""A linear model on standardised features, SGD with momentum at an argparse default rate
of 5.0: diverges at 5.0 and at 0.5, trains at 0.05."""
import argparse

import torch
from torch import nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=5.0)
    parser.add_argument("--steps", type=int, default=40)
    args = parser.parse_args()
    torch.manual_seed(1)
    x = torch.randn(256, 4) * 2.0
    y = x @ torch.tensor([[1.5], [-2.0], [0.5], [3.0]])
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    for step in range(args.steps):
        idx = torch.randint(0, 256, (32,))
        loss = nn.functional.mse_loss(model(x[idx]), y[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.4g}")


if __name__ == "__main__":
    main()
