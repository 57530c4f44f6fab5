"""Word-level GRU language model in a main() function; targets flattened with reshape,
gradient clipping, perplexity evaluated on held-out windows at the end."""
import math

import torch
from torch import nn


class WordLM(nn.Module):
    def __init__(self, vocab_size, dim=48):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, dim)
        self.gru = nn.GRU(dim, dim, num_layers=1, batch_first=True)
        self.decoder = nn.Linear(dim, vocab_size)

    def forward(self, tokens):
        output, _ = self.gru(self.embedding(tokens))
        return self.decoder(output)


def batches(ids, n, seq_len, generator):
    starts = torch.randint(0, len(ids) - seq_len - 1, (n,), generator=generator)
    x = torch.stack([ids[s:s + seq_len] for s in starts])
    return x, torch.stack([ids[s + 1:s + seq_len + 1] for s in starts])


def main():
    generator = torch.Generator().manual_seed(3)
    torch.manual_seed(3)
    words = ("a cat sat on the mat and a dog sat on the log while the bird sang " * 60).split()
    vocab = {w: i for i, w in enumerate(sorted(set(words)))}
    ids = torch.tensor([vocab[w] for w in words])
    train_ids, valid_ids = ids[:700], ids[700:]
    model = WordLM(len(vocab))
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3)
    for step in range(40):
        x, y = batches(train_ids, 16, 12, generator)
        loss = nn.functional.cross_entropy(model(x).reshape(-1, len(vocab)), y.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step % 10 == 0:
            print(f"step {step} loss {loss.item():.3f}")
    model.eval()
    with torch.no_grad():
        x, y = batches(valid_ids, 32, 12, generator)
        valid = nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
    print(f"valid perplexity {math.exp(valid.item()):.2f}")


if __name__ == "__main__":
    main()
