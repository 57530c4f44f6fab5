"""Continuing to train a saved LoRA adapter: PeftModel.from_pretrained loads it in inference
mode (is_trainable=False), so no parameter requires grad. With SFTConfig's default gradient
checkpointing the input embeddings are made to require grad, so backward runs and the run
"trains" with grad_norm 0 and a flat loss (no error).
Report: tloen/alpaca-lora#352 ("trainable params: 0"; reproduced afresh on the tiny model).
"""
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

from datasets import Dataset
from peft import LoraConfig, PeftModel, get_peft_model
from transformers import AutoModelForCausalLM, AutoTokenizer
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


base_dir = tiny_llm()
tokenizer = AutoTokenizer.from_pretrained(base_dir)

# a first LoRA run's adapter, saved (untrained here: enough to show the reload)
adapter_dir = tempfile.mkdtemp()
first = get_peft_model(AutoModelForCausalLM.from_pretrained(base_dir),
                       LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"],
                                  task_type="CAUSAL_LM"))
first.save_pretrained(adapter_dir)

model = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(base_dir), adapter_dir)
model.print_trainable_parameters()

more_data = Dataset.from_list([{"prompt": f"Question: {r['question']}\nAnswer:",
                                "completion": f" {r['answer']}"} for r in qa_rows()])
trainer = SFTTrainer(
    model=model,
    args=SFTConfig(output_dir=tempfile.mkdtemp(), max_steps=10, per_device_train_batch_size=8,
                   learning_rate=1e-2, logging_steps=2, report_to="none", save_strategy="no",
                   bf16=False),
    train_dataset=more_data,
    processing_class=tokenizer,
)
trainer.train()
