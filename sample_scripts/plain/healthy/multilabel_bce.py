"""Multi-label tagging: each of 5 tags is on when a feature crosses a threshold;
BCEWithLogitsLoss on float multi-hot targets, micro-F1 by sigmoid > 0.5."""
import torch
from torch import nn

torch.manual_seed(5)
features = torch.randn(700, 12)
tags = (features[:, :5] + 0.3 * torch.randn(700, 5) > 0.3).float()
train_x, train_y, test_x, test_y = features[:600], tags[:600], features[600:], tags[600:]

model = nn.Sequential(nn.Linear(12, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 5))
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
criterion = nn.BCEWithLogitsLoss()

for epoch in range(3):
    model.train()
    for i in range(0, 600, 30):
        optimizer.zero_grad()
        loss = criterion(model(train_x[i:i + 30]), train_y[i:i + 30])
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")

model.eval()
with torch.no_grad():
    predicted = (torch.sigmoid(model(test_x)) > 0.5).float()
tp = (predicted * test_y).sum()
f1 = 2 * tp / (predicted.sum() + test_y.sum())
print(f"micro F1 {f1.item():.3f}")
