"""An MLP regression trained by SGD at lr=10: the loss overflows in a few steps, a tenth of
it (1.0) still diverges, a hundredth (0.1) trains."""
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(512, 8)
y = x @ torch.randn(8, 1) + 0.1 * torch.randn(512, 1)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=10.0)
for epoch in range(4):
    for i in range(0, 512, 32):
        loss = nn.functional.mse_loss(model(x[i:i + 32]), y[i:i + 32])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4g}")
