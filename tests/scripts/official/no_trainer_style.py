"""Sentence-pair classification in the shape of transformers' accelerate example loop
(written for autofix's tests, not copied): argparse options with defaults, the tokenized
splits in DataLoaders sharing one padding collator, an optimizer at
``args.learning_rate``, a step limit that breaks the loop, and an evaluation loop that
gathers predictions into ``metric.add_batch`` before ``metric.compute()``."""

import argparse

import numpy as np
import torch
from accelerate import Accelerator
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding


class Accuracy:
    """evaluate's accumulation idiom, without the Hub: add_batch, then compute."""

    def __init__(self):
        self.predictions, self.references = [], []

    def add_batch(self, predictions, references):
        self.predictions.append(np.asarray(predictions))
        self.references.append(np.asarray(references))

    def compute(self):
        predictions, references = np.concatenate(self.predictions), np.concatenate(self.references)
        return {"accuracy": float((predictions == references).astype(float).mean().item())}


def parse_args():
    parser = argparse.ArgumentParser(description="fine-tune a text classifier")
    parser.add_argument("--train_file", type=str, required=True)
    parser.add_argument("--validation_file", type=str, required=True)
    parser.add_argument("--model_name_or_path", type=str, required=True)
    parser.add_argument("--per_device_train_batch_size", type=int, default=8)
    parser.add_argument(
        "--learning_rate",
        type=float,
        default=5e-5,
        help="Initial learning rate.",
    )
    parser.add_argument("--max_train_steps", type=int, default=20)
    return parser.parse_args()


def main():
    args = parse_args()
    accelerator = Accelerator()
    raw_datasets = load_dataset("csv", data_files={"train": args.train_file,
                                                   "validation": args.validation_file})
    num_labels = len(raw_datasets["train"].unique("label"))
    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    model = AutoModelForSequenceClassification.from_pretrained(args.model_name_or_path,
                                                               num_labels=num_labels)

    def preprocess_function(examples):
        result = tokenizer(examples["sentence1"], examples["sentence2"], truncation=True)
        result["labels"] = examples["label"]
        return result

    processed_datasets = raw_datasets.map(preprocess_function, batched=True,
                                          remove_columns=raw_datasets["train"].column_names)
    train_dataset = processed_datasets["train"]
    eval_dataset = processed_datasets["validation"]
    data_collator = DataCollatorWithPadding(tokenizer)
    train_dataloader = DataLoader(
        train_dataset, shuffle=True, collate_fn=data_collator, batch_size=args.per_device_train_batch_size
    )
    eval_dataloader = DataLoader(eval_dataset, collate_fn=data_collator, batch_size=16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    model, optimizer, train_dataloader, eval_dataloader = accelerator.prepare(
        model, optimizer, train_dataloader, eval_dataloader)

    completed_steps = 0
    model.train()
    for batch in train_dataloader:
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        completed_steps += 1
        if completed_steps >= args.max_train_steps:
            break

    model.eval()
    metric = Accuracy()
    for batch in eval_dataloader:
        with torch.no_grad():
            outputs = model(**batch)
        predictions = outputs.logits.argmax(dim=-1)
        predictions, references = accelerator.gather((predictions, batch["labels"]))
        metric.add_batch(predictions=predictions, references=references)
    print(metric.compute())


if __name__ == "__main__":
    main()
