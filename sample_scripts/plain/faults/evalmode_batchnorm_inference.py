"""A CNN with batch norm evaluated every epoch under torch.inference_mode() but still in
training mode: the test batches are normalised with their own statistics (and the running
statistics are updated by the test data)."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(1)


def images(n, shift):
    labels = torch.randint(0, 2, (n,))
    x = torch.randn(n, 1, 8, 8) + shift
    x[labels == 1, :, :4] += 1.0
    return x, labels


model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                      nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(32, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
train_loader = DataLoader(TensorDataset(*images(320, 0.0)), batch_size=32, shuffle=True)
test_loader = DataLoader(TensorDataset(*images(64, 0.0)), batch_size=8)
for epoch in range(3):
    for xb, yb in train_loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
    correct = 0
    with torch.inference_mode():
        for xb, yb in test_loader:
            correct += (model(xb).argmax(1) == yb).sum().item()
    print(f"epoch {epoch} loss {loss.item():.4f} accuracy {correct / 64:.3f}")
