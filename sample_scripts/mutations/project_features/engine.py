"""Training and evaluation as a class: an epoch of optimizer steps, the step-decay schedule
stepped once per epoch, accuracy of the predictions against the labels in order."""
import torch


class Engine:
    def __init__(self, model, optimizer, scheduler, loss_fn):
        self.model = model
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.loss_fn = loss_fn

    def train_epoch(self, loader):
        self.model.train()
        total = 0.0
        for features, labels in loader:
            self.optimizer.zero_grad()
            loss = self.loss_fn(self.model(features), labels)
            loss.backward()
            self.optimizer.step()
            total += loss.item()
        return total / len(loader)

    def fit(self, loader, epochs):
        for epoch in range(epochs):
            loss = self.train_epoch(loader)
            self.scheduler.step()
            print(f"epoch {epoch} train loss {loss:.4f}")

    def evaluate(self, loader, labels):
        self.model.eval()
        with torch.no_grad():
            logits = torch.cat([self.model(features) for features, _ in loader])
        return (logits.argmax(dim=1) == labels).float().mean().item()
