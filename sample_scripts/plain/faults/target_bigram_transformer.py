"""A small causal transformer language model over byte ids: logits (batch, time, vocab)
and targets (batch, time) given to the loss without flattening."""
import torch
from torch import nn

torch.manual_seed(2)
data = torch.tensor(list(b"to be or not to be that is the question " * 20))
VOCAB, BLOCK = 256, 16
embed = nn.Embedding(VOCAB, 32)
layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True)
body = nn.TransformerEncoder(layer, 1)
head = nn.Linear(32, VOCAB)
params = [*embed.parameters(), *body.parameters(), *head.parameters()]
optimizer = torch.optim.AdamW(params, lr=3e-3)
mask = nn.Transformer.generate_square_subsequent_mask(BLOCK)
loss_fn = nn.CrossEntropyLoss()
for step in range(20):
    ix = torch.randint(0, len(data) - BLOCK - 1, (8,))
    x = torch.stack([data[i:i + BLOCK] for i in ix])
    y = torch.stack([data[i + 1:i + BLOCK + 1] for i in ix])
    logits = head(body(embed(x), mask=mask, is_causal=True))
    loss = loss_fn(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, round(loss.item(), 3))
