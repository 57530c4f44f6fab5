"""Fine-tune a small NLI classifier: the entry point of a project split over modules.

The data code lives in ``data.py``, the model in ``model.py``; both hold a fault the
course debugs (the tokenizer asked for tensors inside ``Dataset.map``; the head built
with the default two labels for three classes). Run from this folder:
``python train.py``.
"""
import tempfile

from transformers import Trainer, TrainingArguments

from data import load_splits
from model import build_model, load_tokenizer

NUM_LABELS = 3

tokenizer = load_tokenizer()
splits = load_splits(tokenizer)
model = build_model(NUM_LABELS)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16,
                         num_train_epochs=1, learning_rate=5e-4, report_to="none",
                         save_strategy="no", logging_steps=5)
trainer = Trainer(model=model, args=args, train_dataset=splits["train"],
                  eval_dataset=splits["validation"], processing_class=tokenizer)
trainer.train()
