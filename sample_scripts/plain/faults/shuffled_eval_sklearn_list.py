"""Evaluation every epoch over a shuffling validation loader; the predictions go in a list
and sklearn's accuracy_score compares them with the labels listed from the dataset."""
import torch
from sklearn.metrics import accuracy_score
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(2)
centres = torch.randn(3, 5) * 2
y = torch.randint(0, 3, (600,))
x = centres[y] + torch.randn(600, 5)
val_dataset = TensorDataset(x[480:], y[480:])
val_labels = [int(label) for _, label in val_dataset]
train_loader = DataLoader(TensorDataset(x[:480], y[:480]), batch_size=24, shuffle=True)
val_loader = DataLoader(val_dataset, batch_size=24, shuffle=True)
model = nn.Sequential(nn.Linear(5, 24), nn.ReLU(), nn.Linear(24, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(3):
    model.train()
    for xb, yb in train_loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(xb), yb).backward()
        optimizer.step()
    model.eval()
    preds = []
    with torch.no_grad():
        for xb, _ in val_loader:
            preds.extend(model(xb).argmax(1).tolist())
    print(f"epoch {epoch} val accuracy {accuracy_score(val_labels, preds):.3f}")
