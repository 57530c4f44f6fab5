# A hand loop on a tiny BERT built from a config: "lr0" trains at a learning rate of 0,
# "zero-grad" clears the gradients between backward() and step(), "healthy" trains at
# 1e-3 (a model trained from scratch, not a pretrained one), "pretrained" trains the same
# model at 1e-3 after a save_pretrained/from_pretrained round trip (a checkpoint: Adam at
# 1e-3 moves it far faster than fine-tuning does).
import sys
import tempfile

import torch
from torch.utils.data import DataLoader, TensorDataset
from transformers import BertConfig, BertForSequenceClassification

mode = sys.argv[1]
torch.manual_seed(0)
config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=64, num_labels=3)
model = BertForSequenceClassification(config)
if mode == "pretrained":
    folder = tempfile.mkdtemp()
    model.save_pretrained(folder)
    model = BertForSequenceClassification.from_pretrained(folder)
optimizer = torch.optim.AdamW(model.parameters(), lr=0.0 if mode == "lr0" else 1e-3)
x = torch.randint(0, 100, (640, 12))
loader = DataLoader(TensorDataset(x, x[:, 0] % 3), batch_size=16, shuffle=True)
model.train()
for epoch in range(2):
    for inputs, labels in loader:
        loss = model(input_ids=inputs, labels=labels).loss
        loss.backward()
        if mode == "zero-grad":
            optimizer.zero_grad()
        optimizer.step()
        optimizer.zero_grad()
