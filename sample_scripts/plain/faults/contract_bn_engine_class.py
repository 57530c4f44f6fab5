"""A small trainer class holding its loaders: 97 training rows in batches of 32 leave a
last batch of one row, which the batch norm of the model refuses in training."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_loaders(seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(137, 6, generator=g)
    y = (x[:, :3].sum(1) > 0).long()
    train = TensorDataset(x[:97], y[:97])
    val = TensorDataset(x[97:], y[97:])
    return DataLoader(train, 32, True), DataLoader(val, 40)


class Engine:
    def __init__(self, model, loaders, lr=1e-2):
        self.model = model
        self.train_loader, self.val_loader = loaders
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        self.loss_fn = nn.CrossEntropyLoss()

    def fit(self, epochs):
        for _ in range(epochs):
            self.model.train()
            for x, y in self.train_loader:
                self.optimizer.zero_grad()
                self.loss_fn(self.model(x), y).backward()
                self.optimizer.step()
            print(f"val acc {self.evaluate():.3f}")

    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        hits = sum((self.model(x).argmax(-1) == y).sum().item() for x, y in self.val_loader)
        return hits / len(self.val_loader.dataset)


torch.manual_seed(0)
net = nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 2))
Engine(net, make_loaders()).fit(epochs=8)
