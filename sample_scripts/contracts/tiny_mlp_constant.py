"""A plain MLP whose second layer's width comes from a constant through a parameter: the
first layer gives 32 features, the second is built for ``HIDDEN = 64``
(``mat1 and mat2 shapes cannot be multiplied (16x32 and 64x4)``)."""
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
HIDDEN = 64


class MLP(nn.Module):
    def __init__(self, features, hidden, classes):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(features, 32), nn.ReLU(), nn.Linear(hidden, classes))

    def forward(self, x):
        return self.layers(x)


x = torch.randn(320, 10)
y = (x[:, :4].argmax(1)).long()
net = MLP(10, HIDDEN, 4)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for epoch in range(3):
    for i in range(0, len(x), 16):
        loss = F.cross_entropy(net(x[i:i + 16]), y[i:i + 16])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
