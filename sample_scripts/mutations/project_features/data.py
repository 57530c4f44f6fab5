"""The ticket rows as features: the texts hashed into 256 word counts with numpy (a float64
matrix), the string intents encoded in the order they appear in the training rows, the
rows split into training and validation, and a ``StandardScaler`` fitted on the training
rows only."""
import zlib

import numpy as np
import pandas as pd
import torch
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from torch.utils.data import Dataset

N_FEATURES = 256


def featurize(texts):
    counts = np.zeros((len(texts), N_FEATURES))
    for i, text in enumerate(texts):
        for word in text.split():
            counts[i, zlib.crc32(word.encode()) % N_FEATURES] += 1.0
    return counts


class FeatureDataset(Dataset):
    def __init__(self, features, labels):
        self.features = torch.from_numpy(features.astype(np.float32))
        self.labels = torch.as_tensor(labels, dtype=torch.long)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.features[i], self.labels[i]


def load_splits(path, val_rows=60):
    df = pd.read_csv(path)
    X = featurize(df["text"].tolist())
    X_train, X_val, train_intents, val_intents = train_test_split(
        X, df["intent"], test_size=val_rows, random_state=0, stratify=df["intent"])
    y_train, intents = pd.factorize(train_intents)
    y_val = intents.get_indexer(val_intents)
    scaler = StandardScaler().fit(X_train)
    X_train = scaler.transform(X_train)
    X_val = scaler.transform(X_val)
    return FeatureDataset(X_train, y_train), FeatureDataset(X_val, y_val), len(intents)
