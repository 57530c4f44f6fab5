"""CNN without batch norm or dropout on random 12x12 images of horizontal vs vertical
stripes; SGD with momentum and Nesterov, evaluation once at the end."""
import torch
from torch import nn

torch.manual_seed(18)


def stripes(n):
    labels = torch.randint(0, 2, (n,))
    base = (torch.arange(12) % 4 < 2).float()
    images = torch.where(labels.view(-1, 1, 1) == 0, base.view(1, 12, 1).expand(n, 12, 12),
                         base.view(1, 1, 12).expand(n, 12, 12))
    images = torch.roll(images, shifts=int(torch.randint(0, 4, ()).item()), dims=1)
    return (images + 0.3 * torch.randn(n, 12, 12)).unsqueeze(1), labels


model = nn.Sequential(nn.Conv2d(1, 6, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 12, 3),
                      nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(12, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
for step in range(40):
    images, labels = stripes(32)
    optimizer.zero_grad()
    loss = nn.CrossEntropyLoss()(model(images), labels)
    loss.backward()
    optimizer.step()
    if step % 10 == 0:
        print(f"step {step} loss {loss.item():.4f}")
test_images, test_labels = stripes(200)
model.eval()
with torch.no_grad():
    print("accuracy", (model(test_images).argmax(1) == test_labels).float().mean().item())
