"""A small CNN with batch norm on random 16x16 images whose class is the bright quadrant;
evaluated every epoch under torch.inference_mode() after model.eval()."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(1)


def make_images(n):
    labels = torch.randint(0, 4, (n,))
    images = torch.randn(n, 1, 16, 16) * 0.5
    for i, quadrant in enumerate(labels.tolist()):
        r, c = divmod(quadrant, 2)
        images[i, 0, r * 8:(r + 1) * 8, c * 8:(c + 1) * 8] += 1.5
    return images, labels


class QuadrantNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16 * 4 * 4, 4)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        return self.fc(x.flatten(1))


train_loader = DataLoader(TensorDataset(*make_images(384)), batch_size=32, shuffle=True)
test_loader = DataLoader(TensorDataset(*make_images(128)), batch_size=64)
model = QuadrantNet()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)

for epoch in range(3):
    model.train()
    for images, labels in train_loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
    model.eval()
    correct = 0
    with torch.inference_mode():
        for images, labels in test_loader:
            correct += (model(images).argmax(1) == labels).sum().item()
    print(f"epoch {epoch} loss {loss.item():.4f} test accuracy {correct / 128:.3f}")
