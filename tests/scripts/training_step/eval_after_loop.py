"""A dropout MLP evaluated at module level after its training loop, without model.eval()
and without torch.no_grad(): dropout stays on for the test predictions."""
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(800, 8)
y = (x[:, 0] + x[:, 1] > 0).long()
model = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Dropout(0.5), nn.Linear(64, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(2):
    for i in range(0, 600, 30):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x[i:i + 30]), y[i:i + 30])
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
correct = 0
for i in range(600, 800, 50):
    correct += (model(x[i:i + 50]).argmax(1) == y[i:i + 50]).sum().item()
print(f"test accuracy {correct / 200:.3f}")
