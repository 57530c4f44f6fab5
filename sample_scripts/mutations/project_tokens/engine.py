"""Training and evaluation as a class: the schedule stepped after every optimizer step, a
class-weighted loss on the logits, accuracy over the evaluation batches."""
import torch


class Trainer:
    def __init__(self, model, optimizer, scheduler, loss_fn):
        self.model = model
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.loss_fn = loss_fn

    def train_step(self, batch):
        self.optimizer.zero_grad()
        logits = self.model(batch["input_ids"], batch["attention_mask"])
        loss = self.loss_fn(logits, batch["labels"])
        loss.backward()
        self.optimizer.step()
        self.scheduler.step()
        return loss.item()

    def fit(self, loader, epochs=1):
        self.model.train()
        for epoch in range(epochs):
            total = sum(self.train_step(batch) for batch in loader)
            print(f"epoch {epoch} train loss {total / len(loader):.4f}")

    def evaluate(self, loader):
        self.model.eval()
        correct = total = 0
        with torch.no_grad():
            for batch in loader:
                logits = self.model(batch["input_ids"], batch["attention_mask"])
                correct += (logits.argmax(dim=-1) == batch["labels"]).sum().item()
                total += len(batch["labels"])
        return correct / total
