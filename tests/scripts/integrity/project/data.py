"""Rows of (features, class name); each split's Dataset maps its own class names to ids in
the order they appear in that split (the label-encoding fault: another order in each)."""
import torch
from torch.utils.data import Dataset


def make_rows(n, seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=gen)
    score = x[:, 0] + 0.5 * x[:, 1]
    names = ["low" if s < -0.4 else "mid" if s < 0.4 else "high" for s in score.tolist()]
    return x, names


class Rows(Dataset):
    def __init__(self, x, names):
        self.label2id = {name: i for i, name in enumerate(dict.fromkeys(names))}
        self.x = x
        self.y = torch.tensor([self.label2id[name] for name in names])

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]
