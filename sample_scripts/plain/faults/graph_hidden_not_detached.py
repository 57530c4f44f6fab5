"""A stateful LSTM language model that carries its hidden state from one batch to the next
without detaching it (truncated BPTT without the truncation)."""
import torch
from torch import nn

torch.manual_seed(0)
text = "abcdefgh" * 200
ids = torch.tensor([ord(c) - 97 for c in text]).view(8, -1)


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(8, 16)
        self.lstm = nn.LSTM(16, 32, batch_first=True)
        self.out = nn.Linear(32, 8)

    def forward(self, x, state=None):
        h, state = self.lstm(self.emb(x), state)
        return self.out(h), state


model = LM()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
state = None
for t in range(0, ids.size(1) - 21, 20):
    x, y = ids[:, t:t + 20], ids[:, t + 1:t + 21]
    logits, state = model(x, state)
    loss = nn.functional.cross_entropy(logits.reshape(-1, 8), y.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"window {t // 20} loss {loss.item():.3f}")
