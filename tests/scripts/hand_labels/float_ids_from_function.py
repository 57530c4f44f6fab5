"""A hand loop whose class ids come as float32 from a generator function the script
defines: the float token is in its yield statement, where the fix belongs."""
import torch
from torch import nn


def batches(n: int, size: int):
    torch.manual_seed(0)
    for _ in range(n):
        x = torch.randn(size, 8)
        yield x, (x[:, 0] > 0).float()


model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()
for features, target in batches(20, 8):
    opt.zero_grad()
    loss = criterion(model(features), target)
    loss.backward()
    opt.step()
