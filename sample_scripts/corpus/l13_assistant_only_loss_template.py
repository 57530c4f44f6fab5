"""assistant_only_loss=True with a chat template that has no {% generation %} markers. TRL
0.19 failed on the first example ("has no assistant tokens"); TRL 1.16 patches the
templates it knows (Qwen3's among them) and refuses the others before training.
Report: QwenLM/Qwen3#1522 (reproduced afresh with the tiny model's Zephyr-like template).
"""
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

from datasets import Dataset
from transformers import AutoTokenizer
from trl import SFTConfig, SFTTrainer


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


chats = Dataset.from_list([{"messages": [{"role": "user", "content": r["question"]},
                                         {"role": "assistant", "content": r["answer"]}]}
                           for r in qa_rows()])
folder = tiny_llm()
tokenizer = AutoTokenizer.from_pretrained(folder)
cfg = SFTConfig(output_dir=tempfile.mkdtemp(), max_steps=10, per_device_train_batch_size=8,
                learning_rate=2e-3, assistant_only_loss=True, logging_steps=2,
                report_to="none", save_strategy="no", bf16=False)
SFTTrainer(model=folder, args=cfg, train_dataset=chats, processing_class=tokenizer).train()
