import torch
from torch import nn


def loss_fn(outputs, targets):
    return nn.CrossEntropyLoss()(outputs, targets)


def train_fn(data_loader, model, optimizer):
    model.train()
    for step, d in enumerate(data_loader):
        optimizer.zero_grad()
        outputs = model(ids=d["ids"], mask=d["mask"], token_type_ids=d["token_type_ids"])
        loss = loss_fn(outputs, d["targets"])
        loss.backward()
        optimizer.step()
        if step % 5 == 0:
            print(f"step {step} loss {loss.item():.4f}")


def eval_fn(data_loader, model):
    model.eval()
    preds, golds = [], []
    with torch.no_grad():
        for d in data_loader:
            outputs = model(ids=d["ids"], mask=d["mask"], token_type_ids=d["token_type_ids"])
            preds += outputs.argmax(-1).tolist()
            golds += d["targets"].tolist()
    return sum(p == g for p, g in zip(preds, golds, strict=True)) / len(golds)
