"""Min-max scaling computed in a prepare() function over the full tensor, then a
torch.utils.data.random_split into train and validation sets."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split


def prepare(x):
    lo, hi = x.min(dim=0).values, x.max(dim=0).values
    return (x - lo) / (hi - lo)


def main():
    torch.manual_seed(2)
    x = torch.rand(600, 3) * torch.tensor([10.0, 1000.0, 1.0])
    y = (x[:, 0] / 10 + x[:, 1] / 1000 - x[:, 2]).unsqueeze(1)
    dataset = TensorDataset(prepare(x), y)
    train_set, val_set = random_split(dataset, [480, 120], generator=torch.Generator().manual_seed(2))
    model = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for epoch in range(4):
        for xb, yb in DataLoader(train_set, batch_size=40, shuffle=True):
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            optimizer.step()
        xv, yv = val_set[:]
        with torch.no_grad():
            print(f"epoch {epoch} val mse {nn.functional.mse_loss(model(xv), yv).item():.4f}")


if __name__ == "__main__":
    main()
