"""Trains, but wrongly (issue 8): the labels were shuffled apart from their inputs, and 80 %
of them are class 0. No error, no stall (the loss falls from ln 2 to the entropy of the
class frequencies, about 0.50), but the model learns only how often each class occurs and
predicts class 0 for every row. A tiny BERT built from a config (no download)."""

import torch
from transformers import BertConfig, BertForSequenceClassification

torch.manual_seed(0)
config = BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=64, max_position_embeddings=16, num_labels=2)
model = BertForSequenceClassification(config)
labels = (torch.rand(960) < 0.2).long()  # 80 % class 0, 20 % class 1
inputs = 3 + 30 * labels[:, None] + torch.randint(0, 30, (960, 8))  # words tell the class
labels = labels[torch.randperm(len(labels))]  # ... but the labels are shuffled on their own
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
model.train()
for epoch in range(2):
    for i in range(0, len(inputs), 16):
        loss = model(input_ids=inputs[i:i + 16], labels=labels[i:i + 16]).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
print("done")
