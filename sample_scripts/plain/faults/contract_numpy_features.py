"""Features made with numpy (float64 by default) fed to a float32 ``nn.Linear`` through
``torch.from_numpy``: ``mat1 and mat2 must have the same dtype, but got Double and
Float``."""
import numpy as np
import torch
from torch import nn

rng = np.random.default_rng(0)
features = rng.normal(size=(256, 5))
targets = (features @ np.array([1.0, -2.0, 0.5, 0.0, 1.5]) > 0).astype(np.int64)

model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(4):
    for i in range(0, 256, 32):
        xb = torch.from_numpy(features[i:i + 32])
        yb = torch.from_numpy(targets[i:i + 32])
        loss = nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
