"""Embedded inputs computed once before the loop through a trainable embedding layer, then
reused every step: the second backward goes through the embedding's graph again."""
import torch
from torch import nn


def train():
    torch.manual_seed(3)
    tokens = torch.randint(0, 50, (256, 6))
    labels = (tokens[:, 0] < 25).long()
    embedding = nn.Embedding(50, 16)
    classifier = nn.Linear(16 * 6, 2)
    optimizer = torch.optim.Adam(list(embedding.parameters()) + list(classifier.parameters()), lr=1e-2)
    features = embedding(tokens).flatten(1)
    for epoch in range(5):
        loss = nn.functional.cross_entropy(classifier(features), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"epoch {epoch} loss {loss.item():.4f}")


if __name__ == "__main__":
    train()
