"""Fine-tuning a causal LM with pad_token = eos_token and transformers'
DataCollatorForLanguageModeling(mlm=False): the collator sets every label equal to the pad id
to -100, so the eos appended to each example is never trained and the model does not learn
to stop. No error: the run trains. The script prints how many eos tokens reach the labels.
Report: huggingface/blog#1302 (reproduced afresh on the tiny model).
"""
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

from datasets import Dataset
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    DataCollatorForLanguageModeling,
    Trainer,
    TrainingArguments,
)


def tiny_llm(base: bool = False) -> str:
    """Folder of the tiny Llama-style test model: $AUTOFIX_TINY_LLM ($AUTOFIX_TINY_LLM_BASE:
    the base variant, no chat template), else built once by scripts/make_tiny_llm.py."""
    name = "AUTOFIX_TINY_LLM_BASE" if base else "AUTOFIX_TINY_LLM"
    if os.environ.get(name):
        return os.environ[name]
    here = Path(__file__).resolve().parent
    folders = (here, *here.parents, Path.cwd(), *Path.cwd().parents)
    makers = [folder / "scripts" / "make_tiny_llm.py" for folder in folders]
    maker = next((m for m in makers if m.is_file()), None)
    if maker is None:
        raise SystemExit(f"set {name} to a folder made by scripts/make_tiny_llm.py")
    stamp = hashlib.sha1(maker.read_bytes()).hexdigest()[:10]
    out = Path(tempfile.gettempdir()) / f"tiny-llm-{'base-' if base else ''}{stamp}"
    if not (out / "config.json").is_file():
        sys.path.insert(0, str(maker.parent))
        from make_tiny_llm import build

        built = build(tempfile.mkdtemp(dir=out.parent), chat_template=not base)
        try:
            built.rename(out)  # atomic: a concurrent run sees all files or none
        except OSError:
            shutil.rmtree(built, ignore_errors=True)
    return str(out)


def qa_rows(n=96):
    """Small templated question/answer rows (sums and invented capitals)."""
    capitals = {"Zorvania": "Velmor", "Quelland": "Ostrid", "Bramoria": "Kelsa",
                "Tirnakia": "Dunmere"}
    rows = []
    for i in range(n):
        if i % 2:
            a, b = i % 9, (i * 7) % 11
            question, answer = f"What is {a} + {b}?", str(a + b)
        else:
            country = sorted(capitals)[(i // 2) % 4]
            question, answer = f"What is the capital of {country}?", capitals[country]
        rows.append({"question": question, "answer": answer})
    return rows


ckpt = tiny_llm()
tokenizer = AutoTokenizer.from_pretrained(ckpt)
tokenizer.pad_token = tokenizer.eos_token
model = AutoModelForCausalLM.from_pretrained(ckpt)

texts = [f"Question: {r['question']}\nAnswer: {r['answer']}{tokenizer.eos_token}"
         for r in qa_rows()]
encoded = Dataset.from_dict({"text": texts}).map(
    lambda batch: tokenizer(batch["text"], truncation=True, max_length=64),
    batched=True, remove_columns=["text"])
collator = DataCollatorForLanguageModeling(tokenizer=tokenizer, mlm=False)

probe = collator([encoded[i] for i in range(8)])
real = probe["attention_mask"] == 1
eos_in_inputs = int(((probe["input_ids"] == tokenizer.eos_token_id) & real).sum())
eos_in_labels = int((probe["labels"] == tokenizer.eos_token_id).sum())
print(f"eos tokens in a batch: {eos_in_inputs} real ones in input_ids, {eos_in_labels} in labels")

trainer = Trainer(
    model=model,
    args=TrainingArguments(output_dir=tempfile.mkdtemp(), max_steps=10,
                           per_device_train_batch_size=8, learning_rate=2e-3,
                           logging_steps=2, report_to="none", save_strategy="no"),
    train_dataset=encoded,
    data_collator=collator,
)
trainer.train()
