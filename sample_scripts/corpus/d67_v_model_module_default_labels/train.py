# Variant (not from a report): a classifier split over model.py, data.py and train.py.
# train.py asks model.build_model for 3 labels; the fault is inside model.py.
import tempfile

from transformers import Trainer, TrainingArguments

from data import load_splits
from model import build_model, load_tokenizer

NUM_LABELS = 3

tokenizer = load_tokenizer()
train = load_splits(tokenizer)
model = build_model(NUM_LABELS)
args = TrainingArguments(tempfile.mkdtemp(), per_device_train_batch_size=16, max_steps=20,
                         learning_rate=3e-5, report_to="none", save_strategy="no",
                         logging_steps=5)
Trainer(model=model, args=args, train_dataset=train, processing_class=tokenizer).train()
