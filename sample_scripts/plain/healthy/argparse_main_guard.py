"""An argparse script (defaults only) with a main() guard: hidden size, epochs and rate as
options, dropout, evaluation at the end with model.eval() and torch.no_grad()."""
import argparse

import torch
from torch import nn


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hidden", type=int, default=48)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--seed", type=int, default=12)
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    x = torch.randn(640, 9)
    y = (x[:, :3].sum(1) > x[:, 3:6].sum(1)).long()
    model = nn.Sequential(nn.Linear(9, args.hidden), nn.ReLU(), nn.Dropout(0.2),
                          nn.Linear(args.hidden, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        model.train()
        for i in range(0, 512, args.batch_size):
            loss = nn.functional.cross_entropy(model(x[i:i + args.batch_size]), y[i:i + args.batch_size])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch} loss {loss.item():.4f}")
    model.eval()
    with torch.no_grad():
        accuracy = (model(x[512:]).argmax(1) == y[512:]).float().mean().item()
    print(f"accuracy {accuracy:.3f}")


if __name__ == "__main__":
    main()
