import tempfile
from transformers import Trainer, TrainingArguments


def build_trainer(model, train_ds):
    args = TrainingArguments(output_dir=tempfile.mkdtemp(), per_device_train_batch_size=8,
                             num_train_epochs=1, report_to="none", save_strategy="no")
    return Trainer(model=model, args=args, train_dataset=train_ds)
