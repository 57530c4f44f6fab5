"""A healthy hand-written loop of known length: 3 epochs x 30 batches = 90 optimizer steps.
It prints progress bars of other lengths too (a pass over 103 rows, an evaluation of 10
batches), which are not its training length."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from tqdm import tqdm

torch.manual_seed(0)
features = torch.randn(120, 8)
labels = (features[:, 0] > 0).long()  # the first feature tells the class
held_out = torch.randn(40, 8)  # rows of their own for the evaluation
for _ in tqdm(range(103), desc="prepare"):  # a bar of 103 rows, not the training length
    pass
loader = DataLoader(TensorDataset(features, labels), batch_size=4, shuffle=True)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
num_epochs = 3


def train_one_epoch() -> None:
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


for epoch in range(num_epochs):
    train_one_epoch()
    with torch.no_grad():
        for (x,) in tqdm(DataLoader(TensorDataset(held_out), batch_size=4), desc="eval"):
            model(x)
print("trained")
