"""A linear warmup schedule sized in optimizer steps (transformers'
get_linear_schedule_with_warmup) stepped once per epoch: the rate stays at the warmup's 0
for the whole first epoch."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from transformers import get_linear_schedule_with_warmup

torch.manual_seed(0)
x = torch.randn(640, 10)
y = (x[:, :3].sum(1) > 0).long()
loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=5,
                                            num_training_steps=len(loader) * 3)
for epoch in range(3):
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
    scheduler.step()
    print(f"epoch {epoch} loss {loss.item():.4f}")
