"""Two heads on a shared encoder, one loss each; the losses are averaged through
torch.FloatTensor, which copies their values into a new tensor without a graph."""
import torch
from torch import nn


def build():
    encoder = nn.Sequential(nn.Linear(8, 32), nn.ReLU())
    heads = nn.ModuleList([nn.Linear(32, 3), nn.Linear(32, 2)])
    return encoder, heads


def multitask_loss(encoder, heads, x, targets):
    hidden = encoder(x)
    losses = [nn.functional.cross_entropy(head(hidden), t) for head, t in zip(heads, targets)]
    return torch.FloatTensor(losses).mean()


def main():
    torch.manual_seed(3)
    x = torch.randn(320, 8)
    targets = [x[:, :3].argmax(dim=1), (x[:, 3] > 0).long()]
    encoder, heads = build()
    params = list(encoder.parameters()) + list(heads.parameters())
    optimizer = torch.optim.Adam(params, lr=3e-3)
    for epoch in range(5):
        for i in range(0, 320, 32):
            batch = [t[i:i + 32] for t in targets]
            loss = multitask_loss(encoder, heads, x[i:i + 32], batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(epoch, float(loss))


if __name__ == "__main__":
    main()
