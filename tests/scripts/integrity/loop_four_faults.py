"""A hand-written loop in helper functions on tabular rows with string classes, seeded with
four silent faults of data and evaluation (each trains to the end with no error):

* the rows standardised by a scaler fitted on every row, before the train/test split;
* the test classes encoded by their own ``pd.factorize`` (ids in order of appearance);
* the training loss given softmax probabilities (``F.cross_entropy`` applies log_softmax);
* the accuracy computed on ``argmax()`` without a dimension (one flat index).

Prints ``test acc X``. 45 optimizer steps of a small MLP, about a second.
"""
import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from torch import nn


def load():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 6)) * np.array([1.0, 10.0, 100.0, 3.0, 0.5, 20.0]) + 5.0
    score = X[:, 0] - X[:, 1] / 10 + X[:, 2] / 100
    names = np.where(score > 5.5, "high", np.where(score > 4.5, "mid", "low"))
    return X, names


def train_epoch(model, X, y, optimizer):
    model.train()
    for i in range(0, len(X), 30):
        optimizer.zero_grad()
        probs = F.softmax(model(X[i:i + 30]), dim=1)
        loss = F.cross_entropy(probs, y[i:i + 30])
        loss.backward()
        optimizer.step()


def evaluate(model, X, y):
    model.eval()
    with torch.no_grad():
        pred = model(X).argmax()
    return (pred == y).float().mean().item()


def main():
    torch.manual_seed(0)
    X, names = load()
    X = StandardScaler().fit_transform(X)
    X_train, X_test, n_train, n_test = train_test_split(X, names, test_size=0.25,
                                                        random_state=2)
    y_train, classes = pd.factorize(n_train)
    y_test = pd.factorize(n_test)[0]
    X_train, X_test = (torch.tensor(a, dtype=torch.float32) for a in (X_train, X_test))
    y_train, y_test = torch.tensor(y_train), torch.tensor(y_test)
    model = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, len(classes)))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(3):
        train_epoch(model, X_train, y_train, optimizer)
    print(f"test acc {evaluate(model, X_test, y_test):.3f}")


if __name__ == "__main__":
    main()
