"""A character LSTM language model whose (batch, time, vocab) logits go to cross_entropy
unflattened against (batch, time) targets: Expected target size [16, 27], got [16, 32]."""
import torch
from torch import nn

torch.manual_seed(0)
text = "hello world this is a small corpus " * 30
vocab = sorted(set(text))
ids = torch.tensor([vocab.index(c) for c in text])


class CharLM(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.embed = nn.Embedding(n, 24)
        self.lstm = nn.LSTM(24, 48, batch_first=True)
        self.proj = nn.Linear(48, n)

    def forward(self, x):
        return self.proj(self.lstm(self.embed(x))[0])


model = CharLM(len(vocab))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(30):
    starts = torch.randint(0, len(ids) - 33, (16,))
    x = torch.stack([ids[s:s + 32] for s in starts])
    y = torch.stack([ids[s + 1:s + 33] for s in starts])
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
