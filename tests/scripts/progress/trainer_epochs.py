"""A healthy Trainer of known length: 2 epochs x 20 batches of 8 rows = 40 steps, with an
evaluation of 10 batches each epoch (its progress bar is not the training length). A tiny
BERT built from a config (no download); the words tell the class."""

import tempfile

import numpy as np
import torch
from datasets import Dataset
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

torch.manual_seed(0)
rng = np.random.default_rng(0)


def rows(n: int) -> Dataset:
    labels = rng.integers(0, 2, n)
    ids = 3 + 20 * labels[:, None] + rng.integers(0, 20, (n, 8))
    return Dataset.from_dict({"input_ids": ids.tolist(), "labels": labels.tolist()})


config = BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=64, max_position_embeddings=16, num_labels=2)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=8,
                         per_device_eval_batch_size=4, learning_rate=3e-3, num_train_epochs=2,
                         eval_strategy="epoch", report_to="none", use_cpu=True,
                         save_strategy="no")
trainer = Trainer(model=BertForSequenceClassification(config), args=args,
                  train_dataset=rows(160), eval_dataset=rows(40))
trainer.train()
