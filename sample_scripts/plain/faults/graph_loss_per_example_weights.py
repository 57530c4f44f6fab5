"""Per-example weights applied in a Python loop over the batch, the weighted losses
gathered in a list and turned into one tensor with torch.tensor before the mean."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
data = torch.randn(192, 5)
target = (data[:, 0] - data[:, 1] > 0).long()
weight = torch.where(target == 1, 2.0, 1.0)  # the rarer outcome counts twice

net = torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)

for epoch in range(3):
    for start in range(0, 192, 24):
        rows = slice(start, start + 24)
        per_example = []
        for xi, yi, wi in zip(data[rows], target[rows], weight[rows]):
            per_example.append(wi * F.cross_entropy(net(xi.unsqueeze(0)), yi.unsqueeze(0)))
        batch_loss = torch.tensor(per_example).mean()
        opt.zero_grad()
        batch_loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {batch_loss.item():.3f}")
