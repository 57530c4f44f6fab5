"""A pandas table of features and labels; the labels are taken as a one-column table
(``df[["label"]]``), so each batch's class ids are ``(batch, 1)``: ``0D or 1D target
tensor expected, multi-target not supported``."""
import numpy as np
import pandas as pd
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

rng = np.random.default_rng(1)
frame = pd.DataFrame(rng.normal(size=(300, 4)), columns=["a", "b", "c", "d"])
frame["label"] = ((frame["a"] > 0).astype(int) + (frame["b"] > 0).astype(int))


class Classifier(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, classes))

    def forward(self, x):
        return self.layers(x)


def loaders(df):
    x = torch.tensor(df[["a", "b", "c", "d"]].values, dtype=torch.float32)
    y = torch.tensor(df[["label"]].values, dtype=torch.long)
    return DataLoader(TensorDataset(x, y), batch_size=30, shuffle=True)


model = Classifier(3)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
criterion = nn.CrossEntropyLoss()
for epoch in range(5):
    for features, labels in loaders(frame):
        optimizer.zero_grad()
        loss = criterion(model(features), labels)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
