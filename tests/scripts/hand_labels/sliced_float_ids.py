"""A hand loop whose class ids are built as float32 (dtype=torch.float) and sliced into
batches by hand: cross-entropy raises for the float target."""

import torch
from torch import nn

torch.manual_seed(0)
feats = torch.randn(64, 8)
labels = [i % 3 for i in range(64)]
y = torch.tensor(labels, dtype=torch.float)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
loss_fn = nn.CrossEntropyLoss()
for _epoch in range(3):
    for i in range(0, 64, 8):
        xb, yb = feats[i:i + 8], y[i:i + 8]
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        print(f"step loss {loss.item():.4f}")
