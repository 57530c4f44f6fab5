"""A small trainer class: one optimizer step per batch, the learning-rate schedule stepped
once per epoch, and an evaluation that compares the predictions with the labels in the
evaluation set's order."""
import torch


class Engine:
    def __init__(self, model, optimizer, scheduler, loss_fn):
        self.model = model
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.loss_fn = loss_fn

    def train_step(self, batch):
        input_ids, attention_mask, labels = batch
        self.optimizer.zero_grad()
        logits = self.model(input_ids, attention_mask)
        loss = self.loss_fn(logits, labels)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def fit(self, loader, epochs):
        for epoch in range(epochs):
            self.model.train()
            losses = [self.train_step(batch) for batch in loader]
            self.scheduler.step()
            print(f"epoch {epoch} train loss {sum(losses) / len(losses):.4f}")

    def evaluate(self, loader, labels):
        self.model.eval()
        predictions = []
        with torch.no_grad():
            for input_ids, attention_mask, _ in loader:
                predictions.append(self.model(input_ids, attention_mask).argmax(dim=-1))
        return (torch.cat(predictions) == torch.tensor(labels)).float().mean().item()
