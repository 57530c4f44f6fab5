"""A CNN trained from a DataLoader with Adam in a train() function that never clears the
gradients."""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def train(model, loader, optimizer, epochs=2):
    model.train()
    for epoch in range(epochs):
        for images, labels in loader:
            loss = nn.functional.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch} loss {loss.item():.4f}")


if __name__ == "__main__":
    torch.manual_seed(1)
    labels = torch.randint(0, 2, (320,))
    images = torch.randn(320, 1, 8, 8)
    images[labels == 1, :, :, :4] += 1.0
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 2))
    train(model, DataLoader(TensorDataset(images, labels), batch_size=16, shuffle=True),
          torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9))
