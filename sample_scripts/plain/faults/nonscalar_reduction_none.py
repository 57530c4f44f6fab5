"""CrossEntropyLoss(reduction='none') (kept per sample for logging) and then backward()
on the per-sample vector."""
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(256, 6)
y = (x.sum(1) > 0).long()
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 2))
criterion = nn.CrossEntropyLoss(reduction="none")
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(2):
    for i in range(0, 256, 32):
        per_sample = criterion(model(x[i:i + 32]), y[i:i + 32])
        print(f"hardest sample loss {per_sample.max().item():.3f}")
        optimizer.zero_grad()
        per_sample.backward()
        optimizer.step()
