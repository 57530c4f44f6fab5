"""Fine-tuning a causal LM with Trainer and DataCollatorWithPadding (the classifier recipe):
the batches carry input_ids and attention_mask but no labels, so the model returns no loss.
Report: philschmid/sagemaker-huggingface-llama-2-samples#22 (reproduced afresh on the tiny
model).
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
    DataCollatorWithPadding,
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


model_id = tiny_llm()
tokenizer = AutoTokenizer.from_pretrained(model_id)
tokenizer.pad_token = tokenizer.eos_token
model = AutoModelForCausalLM.from_pretrained(model_id)

prompts = Dataset.from_dict({"text": [f"### Q: {r['question']}\n### A: {r['answer']}"
                                      for r in qa_rows()]})
tokenized = prompts.map(lambda b: tokenizer(b["text"], truncation=True, max_length=64),
                        batched=True, remove_columns=["text"])
trainer = Trainer(
    model=model,
    args=TrainingArguments(output_dir=tempfile.mkdtemp(), max_steps=10,
                           per_device_train_batch_size=8, learning_rate=2e-3,
                           logging_steps=2, report_to="none", save_strategy="no"),
    train_dataset=tokenized,
    data_collator=DataCollatorWithPadding(tokenizer),
)
trainer.train()
