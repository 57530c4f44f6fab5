"""A dropout MLP evaluated under torch.no_grad() after training, without model.eval():
dropout stays on, so the reported accuracy is lower than the model's and changes from one
evaluation to the next."""
import torch
from torch import nn

torch.manual_seed(0)
w = torch.randn(12, 3)
x = torch.randn(900, 12)
y = (x @ w).argmax(1)
model = nn.Sequential(nn.Linear(12, 64), nn.ReLU(), nn.Dropout(0.5), nn.Linear(64, 64),
                      nn.ReLU(), nn.Dropout(0.5), nn.Linear(64, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
for epoch in range(3):
    for i in range(0, 750, 50):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x[i:i + 50]), y[i:i + 50])
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")

with torch.no_grad():
    accuracy = (model(x[750:]).argmax(1) == y[750:]).float().mean().item()
print(f"test accuracy {accuracy:.3f}")
