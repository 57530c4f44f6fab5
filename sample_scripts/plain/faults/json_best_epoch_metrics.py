"""Training metrics written to metrics.json at the end: the best epoch found with
np.argmax and the class count with np.bincount, both numpy int64."""
import json
import tempfile
from pathlib import Path

import numpy as np
import torch
from torch import nn

torch.manual_seed(2)
x = torch.randn(400, 6)
y = (x[:, 0] + x[:, 1] > 0).long()
model = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
accuracies = []
for epoch in range(4):
    for i in range(0, 320, 32):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x[i:i + 32]), y[i:i + 32])
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        accuracies.append((model(x[320:]).argmax(1) == y[320:]).float().mean().item())
    print(f"epoch {epoch} loss {loss.item():.4f} acc {accuracies[-1]:.3f}")

metrics = {"best_epoch": np.argmax(accuracies), "best_accuracy": max(accuracies),
           "positives": np.bincount(y.numpy())[1]}
with open(Path(tempfile.mkdtemp()) / "metrics.json", "w") as f:
    json.dump(metrics, f, indent=2)
