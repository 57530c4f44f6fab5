"""A train_step helper that never clears the gradients: every step adds this batch's
gradients to all the earlier ones (zero-grad-missing, in a function given the optimizer)."""
import torch
from torch import nn


def train_step(model, batch, opt):
    x, y = batch
    logits = model(x)
    loss = nn.functional.cross_entropy(logits, y)
    loss.backward()
    opt.step()
    return loss.item()


def main():
    torch.manual_seed(0)
    x = torch.randn(640, 10)
    y = (x[:, :3].sum(1) > 0).long()
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(2):
        for i in range(0, 640, 32):
            loss = train_step(model, (x[i:i + 32], y[i:i + 32]), opt)
        print(f"epoch {epoch} loss {loss:.4f}")


if __name__ == "__main__":
    main()
