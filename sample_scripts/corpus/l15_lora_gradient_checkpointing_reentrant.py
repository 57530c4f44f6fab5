"""LoRA with transformers' Trainer, gradient checkpointing with use_reentrant=True and no
enable_input_require_grads(): on older stacks the LoRA weights got no gradient
("None of the inputs have requires_grad=True", lora_B stays 0). On transformers 5.24 it
trains: activation checkpointing enables input gradients itself. The script prints the
norm of the lora_B weights after training (0.0 means nothing was learned).
Report: locuslab/open-unlearning#178 (reproduced afresh on the tiny model).
"""
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

from datasets import Dataset
from peft import LoraConfig, get_peft_model
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
tokenizer.pad_token = tokenizer.unk_token
model = get_peft_model(AutoModelForCausalLM.from_pretrained(ckpt),
                       LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"],
                                  task_type="CAUSAL_LM"))
model.print_trainable_parameters()

corpus = Dataset.from_dict({"text": [f"Q: {r['question']} A: {r['answer']}" for r in qa_rows()]})
corpus = corpus.map(lambda b: tokenizer(b["text"]), batched=True, remove_columns=["text"])
args = TrainingArguments(output_dir=tempfile.mkdtemp(), max_steps=10,
                         per_device_train_batch_size=8, learning_rate=1e-2, logging_steps=2,
                         gradient_checkpointing=True,
                         gradient_checkpointing_kwargs={"use_reentrant": True},
                         report_to="none", save_strategy="no")
Trainer(model=model, args=args, train_dataset=corpus,
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False)).train()
norm = sum(p.detach().norm().item() for n, p in model.named_parameters() if "lora_B" in n)
print(f"sum of lora_B norms after training: {norm:.6f}")
