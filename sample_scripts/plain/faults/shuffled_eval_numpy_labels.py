"""Predictions gathered from a shuffling test DataLoader in a predict() function, scored
against the numpy label array kept from before the loader."""
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def predict(model, loader):
    model.eval()
    out = []
    with torch.no_grad():
        for (xb,) in loader:
            out.append(model(xb).argmax(1).numpy())
    return np.concatenate(out)


def main():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(700, 4)).astype(np.float32)
    y = (X[:, 0] * 2 - X[:, 1] > 0).astype(np.int64)
    X_train, y_train, X_test, y_test = X[:560], y[:560], X[560:], y[560:]
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    loader = DataLoader(TensorDataset(torch.from_numpy(X_train), torch.from_numpy(y_train)),
                        batch_size=28, shuffle=True)
    for epoch in range(2):
        model.train()
        for xb, yb in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(xb), yb).backward()
            optimizer.step()
    test_loader = DataLoader(TensorDataset(torch.from_numpy(X_test)), batch_size=35, shuffle=True)
    print("accuracy", (predict(model, test_loader) == y_test).mean())


if __name__ == "__main__":
    main()
