"""A CNN whose fully connected layer is sized for 8x8 feature maps after one pooling, but
the input goes through two poolings (16 x 4 x 4 = 256, not 16 x 8 x 8 = 1024)."""
import torch
import torch.nn.functional as F
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc1 = nn.Linear(16 * 8 * 8, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc2(F.relu(self.fc1(x)))


def main():
    torch.manual_seed(1)
    images, labels = torch.randn(128, 1, 16, 16), torch.randint(0, 4, (128,))
    net = Net()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    for i in range(0, 128, 16):
        optimizer.zero_grad()
        loss = F.cross_entropy(net(images[i:i + 16]), labels[i:i + 16])
        loss.backward()
        optimizer.step()
        print(f"loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
