"""MLP classifier with a StepLR scheduler stepped once per epoch and a OneHot-free
CrossEntropy; the model's zero_grad() (not the optimizer's) clears the gradients."""
import torch
from torch import nn

torch.manual_seed(9)
x = torch.randn(600, 5)
y = (x[:, 0] > 0).long() + (x[:, 1] > 0).long()

model = nn.Sequential(nn.Linear(5, 24), nn.ReLU(), nn.Linear(24, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.2)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)

for epoch in range(4):
    for i in range(0, 480, 40):
        model.zero_grad()
        loss = nn.functional.cross_entropy(model(x[i:i + 40]), y[i:i + 40])
        loss.backward()
        optimizer.step()
    scheduler.step()
    model.eval()
    with torch.no_grad():
        acc = (model(x[480:]).argmax(1) == y[480:]).float().mean().item()
    model.train()
    print(f"epoch {epoch} loss {loss.item():.4f} lr {scheduler.get_last_lr()[0]} acc {acc:.3f}")
