"""Features read from a pandas table with ``.values`` (float64) into ``torch.tensor``
without a dtype, given to a float32 MLP: ``mat1 and mat2 must have the same dtype``."""
import numpy as np
import pandas as pd
import torch
from torch import nn

rng = np.random.default_rng(3)
table = pd.DataFrame({"x1": rng.normal(size=400), "x2": rng.normal(size=400)})
table["y"] = (table["x1"] * table["x2"] > 0).astype(int)


def tensors(df):
    features = torch.tensor(df[["x1", "x2"]].values)
    labels = torch.tensor(df["y"].values)
    return features, labels


features, labels = tensors(table)
model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(80):
    idx = torch.randint(0, 400, (32,))
    loss = nn.functional.cross_entropy(model(features[idx]), labels[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.4f}")
