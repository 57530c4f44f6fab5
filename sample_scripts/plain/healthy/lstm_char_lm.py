"""Character-level LSTM language model on a repeated sentence; the logits are flattened
to (batch*time, vocab) for the cross-entropy."""
import torch
from torch import nn

torch.manual_seed(0)
text = "the quick brown fox jumps over the lazy dog. " * 40
vocab = sorted(set(text))
ids = torch.tensor([vocab.index(ch) for ch in text])
seq_len, batch = 32, 16


class CharLM(nn.Module):
    def __init__(self, vocab_size, hidden=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, 32)
        self.lstm = nn.LSTM(32, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab_size)

    def forward(self, x):
        h, _ = self.lstm(self.embed(x))
        return self.out(h)


model = CharLM(len(vocab))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
criterion = nn.CrossEntropyLoss()
for step in range(50):
    starts = torch.randint(0, len(ids) - seq_len - 1, (batch,))
    x = torch.stack([ids[s:s + seq_len] for s in starts])
    y = torch.stack([ids[s + 1:s + seq_len + 1] for s in starts])
    logits = model(x)
    loss = criterion(logits.view(-1, len(vocab)), y.view(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 10 == 0:
        print(f"step {step} loss {loss.item():.3f}")
