"""Sentence-pair classification in the shape of transformers' example scripts (written for
autofix's tests, not copied): dataclass arguments parsed by HfArgumentParser with
TrainingArguments from the command line, the label count from the data given to
AutoConfig, the tokenized splits bound to local variables under do_train/do_eval and
passed to Trainer behind conditionals, compute_metrics on p.predictions with a regression
branch."""

from dataclasses import dataclass, field

import numpy as np
from datasets import load_dataset
from transformers import (
    AutoConfig,
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorWithPadding,
    EvalPrediction,
    HfArgumentParser,
    Trainer,
    TrainingArguments,
)


@dataclass
class ModelArguments:
    model_name_or_path: str = field(metadata={"help": "checkpoint folder"})


@dataclass
class DataArguments:
    train_file: str = field(metadata={"help": "a csv with sentence1, sentence2, label"})
    validation_file: str = field(metadata={"help": "the same for evaluation"})
    max_seq_length: int = field(default=32)
    max_train_samples: int | None = field(default=None)


def main():
    parser = HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    raw_datasets = load_dataset("csv", data_files={"train": data_args.train_file,
                                                   "validation": data_args.validation_file})
    is_regression = raw_datasets["train"].features["label"].dtype in ["float32", "float64"]
    num_labels = 1 if is_regression else len(raw_datasets["train"].unique("label"))
    config = AutoConfig.from_pretrained(model_args.model_name_or_path, num_labels=num_labels)
    tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path)
    model = AutoModelForSequenceClassification.from_pretrained(
        model_args.model_name_or_path, config=config)

    def preprocess_function(examples):
        return tokenizer(examples["sentence1"], examples["sentence2"], truncation=True,
                         max_length=data_args.max_seq_length)

    with training_args.main_process_first(desc="tokenize"):
        raw_datasets = raw_datasets.map(preprocess_function, batched=True)
    if training_args.do_train:
        train_dataset = raw_datasets["train"]
        if data_args.max_train_samples is not None:
            train_dataset = train_dataset.select(range(data_args.max_train_samples))
    if training_args.do_eval:
        eval_dataset = raw_datasets["validation"]

    def compute_metrics(p: EvalPrediction):
        preds = p.predictions[0] if isinstance(p.predictions, tuple) else p.predictions
        preds = np.squeeze(preds) if is_regression else np.argmax(preds, axis=1)
        return {"accuracy": float((preds == p.label_ids).mean())}

    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset if training_args.do_train else None,
        eval_dataset=eval_dataset if training_args.do_eval else None,
        compute_metrics=compute_metrics,
        processing_class=tokenizer,
        data_collator=DataCollatorWithPadding(tokenizer),
    )
    if training_args.do_train:
        trainer.train()
    if training_args.do_eval:
        print(trainer.evaluate())


if __name__ == "__main__":
    main()
