"""A Trainer script whose compute_metrics takes ``argmax()`` without its class axis: one
flat index compared with every label, so the accuracy means nothing and nothing raises. A
tiny BERT built from a config (no download), 3 classes whose words tell the class, already
token ids; 60 optimizer steps, then ``trainer.evaluate()`` prints eval_accuracy."""

import tempfile

import numpy as np
import torch
from datasets import Dataset
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

torch.manual_seed(0)
rng = np.random.default_rng(0)


def rows(n: int) -> Dataset:
    labels = rng.integers(0, 3, n)
    ids = 3 + 20 * labels[:, None] + rng.integers(0, 20, (n, 8))
    return Dataset.from_dict({"input_ids": ids.tolist(), "labels": labels.tolist()})


def accuracy(prediction: object) -> dict[str, float]:
    logits, labels = prediction  # type: ignore[misc]
    return {"accuracy": float((np.argmax(logits) == labels).mean())}


config = BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=64, max_position_embeddings=16, num_labels=3)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16,
                         learning_rate=1e-3, num_train_epochs=1, report_to="none",
                         use_cpu=True, save_strategy="no")
trainer = Trainer(model=BertForSequenceClassification(config), args=args,
                  train_dataset=rows(960), eval_dataset=rows(64), compute_metrics=accuracy)
trainer.train()
print(f"eval accuracy {trainer.evaluate()['eval_accuracy']:.3f}")
