"""Transfer in two stages: a network is trained on a 4-class task, then its encoder is
frozen and a new 3-class head is put on; the second optimizer is built over the trainable
parameters just before the head is replaced, so it holds the old head only."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(16, 64), nn.ReLU())
        self.head = nn.Linear(64, classes)

    def forward(self, x):
        return self.head(self.encoder(x))


def task(rows, classes, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, 16, generator=g)
    return x, x[:, :classes].argmax(dim=1)


def fit(model, optimizer, x, y, epochs):
    for _ in range(epochs):
        for i in range(0, len(x), 32):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x[i:i + 32]), y[i:i + 32])
            loss.backward()
            optimizer.step()
    return loss.item()


torch.manual_seed(0)
net = Net(classes=4)
xa, ya = task(512, 4, seed=0)
print("stage 1", fit(net, torch.optim.Adam(net.parameters(), lr=3e-3), xa, ya, epochs=1))

for p in net.encoder.parameters():
    p.requires_grad = False
stage2 = torch.optim.Adam([p for p in net.parameters() if p.requires_grad], lr=3e-3)
net.head = nn.Linear(64, 3)
xb, yb = task(640, 3, seed=1)
print("stage 2", fit(net, stage2, xb, yb, epochs=5))
