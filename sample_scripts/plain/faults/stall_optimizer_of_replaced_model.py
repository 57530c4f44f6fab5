"""The optimizer is built for a model the script then replaces (a fresh model made with a
fixed seed for the real run): it steps the first model's parameters, which get no
gradients, so the trained model never changes and the loss stays at chance."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_model(seed):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(12, 48), nn.ReLU(), nn.Linear(48, 4))


def run_epoch(model, loader, optimizer):
    model.train()
    total = 0.0
    for features, target in loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(features), target)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(loader)


model = make_model(seed=0)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
print(f"{sum(p.numel() for p in model.parameters())} parameters")

generator = torch.Generator().manual_seed(1)
inputs = torch.randn(512, 12, generator=generator)
classes = inputs[:, :4].argmax(dim=1)
loader = DataLoader(TensorDataset(inputs, classes), batch_size=16, shuffle=True)

model = make_model(seed=42)  # the run's own initialisation
for epoch in range(4):
    print(f"epoch {epoch}: mean loss {run_epoch(model, loader, optimizer):.4f}")
