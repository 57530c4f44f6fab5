"""The model: an MLP over the word-count features, with batch norm and dropout."""
from torch import nn


class FeatureMLP(nn.Module):
    def __init__(self, n_features, num_labels, hidden=64):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_features, hidden), nn.BatchNorm1d(hidden),
                                  nn.ReLU(), nn.Dropout(0.2))
        self.out = nn.Linear(hidden, num_labels)

    def forward(self, x):
        return self.out(self.body(x))
