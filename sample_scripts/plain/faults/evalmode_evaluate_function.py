"""An evaluate() helper that computes the validation loss of a dropout + batch norm model
without switching it to eval mode, called every epoch."""
import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 32), nn.BatchNorm1d(32), nn.ReLU(),
                                 nn.Dropout(0.4), nn.Linear(32, 2))

    def forward(self, x):
        return self.net(x)


def evaluate(model, x, y):
    with torch.no_grad():
        logits = model(x)
        return nn.functional.cross_entropy(logits, y).item(), (logits.argmax(1) == y).float().mean().item()


def main():
    torch.manual_seed(2)
    x = torch.randn(600, 8)
    y = (x[:, 0] - x[:, 1] > 0).long()
    model = Classifier()
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    for epoch in range(3):
        model.train()
        for i in range(0, 500, 25):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x[i:i + 25]), y[i:i + 25])
            loss.backward()
            optimizer.step()
        val_loss, val_acc = evaluate(model, x[500:], y[500:])
        print(f"epoch {epoch} val loss {val_loss:.4f} val acc {val_acc:.3f}")


if __name__ == "__main__":
    main()
