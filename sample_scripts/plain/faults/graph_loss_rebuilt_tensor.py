"""A two-part objective (classification plus an L2 penalty on the weights) whose parts are
summed through torch.tensor: the sum is a new leaf with no graph, so backward() fails."""
import torch
from torch import nn


class Trainer:
    def __init__(self, model, lr=0.05, penalty=1e-3):
        self.model = model
        self.penalty = penalty
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)

    def objective(self, x, y):
        ce = nn.functional.cross_entropy(self.model(x), y)
        l2 = sum((p ** 2).sum() for p in self.model.parameters())
        return torch.tensor([ce, self.penalty * l2]).sum()

    def fit(self, x, y, epochs=4, batch_size=16):
        for epoch in range(epochs):
            for start in range(0, len(x), batch_size):
                loss = self.objective(x[start:start + batch_size], y[start:start + batch_size])
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            print(f"epoch {epoch}: loss {loss.item():.4f}")


torch.manual_seed(0)
x = torch.randn(256, 10)
y = (x[:, :3].sum(dim=1) > 0).long()
Trainer(nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 2))).fit(x, y)
