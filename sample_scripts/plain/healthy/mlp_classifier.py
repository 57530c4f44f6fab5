"""Four-class MLP on Gaussian clusters; evaluated at the end under model.eval() + no_grad,
accuracy by argmax."""
import torch
from torch import nn

torch.manual_seed(0)
centres = torch.randn(4, 10) * 3
labels = torch.randint(0, 4, (800,))
features = centres[labels] + torch.randn(800, 10)
x_train, y_train, x_test, y_test = features[:640], labels[:640], features[640:], labels[640:]

model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
loss_fn = nn.CrossEntropyLoss()

for epoch in range(3):
    for i in range(0, 640, 32):
        loss = loss_fn(model(x_train[i:i + 32]), y_train[i:i + 32])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")

model.eval()
with torch.no_grad():
    accuracy = (model(x_test).argmax(dim=1) == y_test).float().mean().item()
print(f"test accuracy {accuracy:.3f}")
