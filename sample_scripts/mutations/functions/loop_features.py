"""Ticket intents from word-count features with a hand-written loop in helper functions:
the rows split with scikit-learn, the string intents encoded with one mapping made from
the training rows (``pd.factorize``), the texts hashed into 256 word counts with numpy
(float64), a ``StandardScaler`` fitted on the training rows, an MLP with batch norm and
dropout, class weights from ``compute_class_weight``, a ``StepLR`` schedule halving the
rate each epoch, and an evaluation that compares the predictions with the labels in
order.

Prints ``val acc X`` (the validation accuracy). 45 optimizer steps, a few seconds.
"""
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.utils.class_weight import compute_class_weight
from torch import nn
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset

DATA = Path(__file__).resolve().parent.parent / "data"
N_FEATURES = 256


def featurize(texts):
    counts = np.zeros((len(texts), N_FEATURES))
    for i, text in enumerate(texts):
        for word in text.split():
            counts[i, zlib.crc32(word.encode()) % N_FEATURES] += 1.0
    return counts


def load_data():
    df = pd.read_csv(DATA / "tickets.csv")
    train_df, val_df = train_test_split(df, test_size=60, random_state=0,
                                        stratify=df["intent"])
    y_train, intents = pd.factorize(train_df["intent"])
    y_val = intents.get_indexer(val_df["intent"])
    X_train = featurize(train_df["text"].tolist())
    X_val = featurize(val_df["text"].tolist())
    scaler = StandardScaler().fit(X_train)
    X_train, X_val = scaler.transform(X_train), scaler.transform(X_val)
    return X_train, X_val, y_train, y_val


def make_loaders(X_train, X_val, y_train, y_val):
    train_set = TensorDataset(torch.from_numpy(X_train.astype(np.float32)),
                              torch.tensor(y_train, dtype=torch.long))
    val_set = TensorDataset(torch.from_numpy(X_val.astype(np.float32)),
                            torch.tensor(y_val, dtype=torch.long))
    train_loader = DataLoader(train_set, batch_size=16, shuffle=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=20)
    return train_loader, val_loader


def build_model(num_labels=3):
    return nn.Sequential(nn.Linear(N_FEATURES, 64), nn.BatchNorm1d(64), nn.ReLU(),
                         nn.Dropout(0.2), nn.Linear(64, num_labels))


def train_epoch(model, loader, optimizer, scheduler, criterion):
    model.train()
    total = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
    scheduler.step()
    return total / len(loader)


def evaluate(model, loader, labels):
    model.eval()
    predictions = []
    with torch.no_grad():
        for x, _ in loader:
            predictions.append(model(x).argmax(dim=1))
    return (torch.cat(predictions).numpy() == labels).mean()


def main():
    torch.manual_seed(0)
    X_train, X_val, y_train, y_val = load_data()
    train_loader, val_loader = make_loaders(X_train, X_val, y_train, y_val)
    model = build_model()
    weights = compute_class_weight("balanced", classes=np.unique(y_train), y=y_train)
    criterion = nn.CrossEntropyLoss(weight=torch.tensor(weights, dtype=torch.float32))
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.5)
    for epoch in range(3):
        loss = train_epoch(model, train_loader, optimizer, scheduler, criterion)
        print(f"epoch {epoch} train loss {loss:.4f}")
    print(f"val acc {evaluate(model, val_loader, y_val):.3f}")


if __name__ == "__main__":
    main()
