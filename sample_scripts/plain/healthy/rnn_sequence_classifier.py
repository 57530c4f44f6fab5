"""A vanilla nn.RNN reads a sequence of numbers and says whether their sum is positive;
the last hidden state feeds the classifier. Eval at the end with model.eval()."""
import torch
from torch import nn


class SumSign(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.rnn = nn.RNN(1, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, 2)

    def forward(self, seq):
        _, h = self.rnn(seq.unsqueeze(-1))
        return self.fc(h[-1])


torch.manual_seed(15)
seqs = torch.randn(800, 10)
labels = (seqs.sum(1) > 0).long()
model = SumSign()
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
for step in range(50):
    idx = torch.randint(0, 640, (32,))
    loss = nn.functional.cross_entropy(model(seqs[idx]), labels[idx])
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_value_(model.parameters(), 1.0)
    optimizer.step()
    if step % 10 == 0:
        print(f"step {step} loss {loss.item():.4f}")
model.eval()
with torch.no_grad():
    acc = (model(seqs[640:]).argmax(-1) == labels[640:]).float().mean().item()
print(f"accuracy {acc:.3f}")
