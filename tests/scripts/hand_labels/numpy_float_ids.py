"""A hand loop whose class ids are a float32 numpy array turned into tensors batch by
batch: no float token of torch to change; the loss's target is followed back through
torch.from_numpy to the array, made int64 where it is made."""
import numpy as np
import torch
from torch import nn

rng = np.random.default_rng(0)
features = rng.normal(size=(64, 8)).astype(np.float32)
classes = (features[:, 0] > 0).astype(np.float32)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for start in range(0, 64, 16):
    xb = torch.from_numpy(features[start:start + 16])
    yb = torch.from_numpy(classes[start:start + 16])
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(xb), yb)
    loss.backward()
    opt.step()
