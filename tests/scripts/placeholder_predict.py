"""A Trainer script that trains, then predicts a test split whose labels are all -1 (no
gold label, a placeholder): a tiny BERT built from a config (no download), token ids made
here, a DatasetDict with a "label" column."""

import tempfile

import numpy as np
import torch
from datasets import Dataset, DatasetDict
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

torch.manual_seed(0)
rng = np.random.default_rng(0)


def rows(n: int, labelled: bool = True) -> Dataset:
    labels = rng.integers(0, 3, n)
    ids = 3 + 20 * labels[:, None] + rng.integers(0, 20, (n, 8))
    return Dataset.from_dict({"input_ids": ids.tolist(),
                              "label": labels.tolist() if labelled else [-1] * n})


ds = DatasetDict(train=rows(320), test=rows(32, labelled=False))
config = BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=64, max_position_embeddings=16, num_labels=3)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16,
                         learning_rate=1e-3, num_train_epochs=1, report_to="none",
                         use_cpu=True, save_strategy="no")
trainer = Trainer(model=BertForSequenceClassification(config), args=args,
                  train_dataset=ds["train"])
trainer.train()
preds = trainer.predict(ds["test"]).predictions.argmax(-1)
print("predicted", np.bincount(preds, minlength=3).tolist())
