"""An experiment object builds its optimizer in setup() from the model it holds; the
script then swaps in a wider model before calling train(), and the optimizer keeps
stepping the parameters of the model that is no longer trained."""
import torch
from torch import nn


class Experiment:
    def __init__(self, hidden):
        self.model = nn.Sequential(nn.Linear(6, hidden), nn.ReLU(), nn.Linear(hidden, 3))

    def setup(self, lr):
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=lr, momentum=0.9)

    def train(self, x, y, epochs=3, batch=16):
        self.model.train()
        for epoch in range(epochs):
            for i in range(0, len(x), batch):
                self.optimizer.zero_grad()
                loss = nn.functional.cross_entropy(self.model(x[i:i + batch]), y[i:i + batch])
                loss.backward()
                self.optimizer.step()
            print(f"epoch {epoch} loss {loss.item():.4f}")


torch.manual_seed(0)
x = torch.randn(480, 6)
y = torch.bucketize(x[:, 0] + x[:, 1], torch.tensor([-0.5, 0.5]))
exp = Experiment(hidden=16)
exp.setup(lr=0.05)
exp.model = nn.Sequential(nn.Linear(6, 64), nn.ReLU(), nn.Linear(64, 3))  # a wider one
exp.train(x, y)
