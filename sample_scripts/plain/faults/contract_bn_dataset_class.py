"""A Dataset class of synthetic sensor readings and a batch-norm regression head; 129
rows in batches of 16 end every epoch with a one-row batch."""
import math

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Readings(Dataset):
    def __init__(self, n):
        self.t = torch.linspace(0, 4 * math.pi, n).unsqueeze(1)

    def __len__(self):
        return len(self.t)

    def __getitem__(self, i):
        return self.t[i], torch.sin(self.t[i])


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(1, 32), nn.BatchNorm1d(32), nn.Tanh(), nn.Linear(32, 1))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
train = DataLoader(Readings(129), batch_size=16, shuffle=True)
for epoch in range(6):
    for t, target in train:
        loss = nn.functional.mse_loss(model(t), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} mse {loss.item():.4f}")
