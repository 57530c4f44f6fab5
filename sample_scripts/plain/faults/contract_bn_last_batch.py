"""An MLP with batch norm trained on 65 rows in batches of 16: the last batch of every
epoch holds one row, and batch norm in training needs more than one value per channel
(``Expected more than 1 value per channel when training``, at step 5)."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_data(n=65, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 8, generator=g)
    y = (x[:, 0] + x[:, 1] > 0).long()
    return TensorDataset(x, y)


def main():
    torch.manual_seed(0)
    loader = DataLoader(make_data(), batch_size=16, shuffle=True)
    model = nn.Sequential(nn.Linear(8, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(6):
        model.train()
        total = 0.0
        for x, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item()
        print(f"epoch {epoch} loss {total / len(loader):.4f}")


if __name__ == "__main__":
    main()
