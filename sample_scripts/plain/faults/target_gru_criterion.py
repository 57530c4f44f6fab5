"""A word GRU language model trained by a train_step() with an nn.CrossEntropyLoss object,
the 3-D logits given as they are."""
import torch
from torch import nn

WORDS = ("one two three four five six seven eight nine ten " * 40).split()
VOCAB = {w: i for i, w in enumerate(dict.fromkeys(WORDS))}


class GRULM(nn.Module):
    def __init__(self, vocab_size, dim=32):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.lm_head = nn.Linear(dim, vocab_size)

    def forward(self, x):
        return self.lm_head(self.rnn(self.emb(x))[0])


def train_step(model, optimizer, criterion, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = criterion(logits, y)
    loss.backward()
    optimizer.step()
    return loss.item()


def main():
    torch.manual_seed(1)
    ids = torch.tensor([VOCAB[w] for w in WORDS])
    model = GRULM(len(VOCAB))
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    criterion = nn.CrossEntropyLoss()
    for step in range(20):
        s = torch.randint(0, len(ids) - 13, (8,))
        x = torch.stack([ids[i:i + 12] for i in s])
        y = torch.stack([ids[i + 1:i + 13] for i in s])
        print(step, train_step(model, optimizer, criterion, x, y))


if __name__ == "__main__":
    main()
