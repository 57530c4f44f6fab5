"""LoRA target modules copied from a GPT-2 / Qwen-1 recipe (`c_attn`, a fused qkv projection)
onto a Llama-architecture model, whose attention projections are q_proj/k_proj/v_proj/o_proj.
Report: hiyouga/LlamaFactory#3597 (reproduced afresh with peft on the tiny model).
"""
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

import torch
from datasets import Dataset
from peft import LoraConfig, get_peft_model
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling


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


path = tiny_llm()
tokenizer = AutoTokenizer.from_pretrained(path)
tokenizer.pad_token = tokenizer.eos_token
model = AutoModelForCausalLM.from_pretrained(path)

lora = LoraConfig(r=8, lora_alpha=16, lora_dropout=0.05, target_modules=["c_attn"],
                  task_type="CAUSAL_LM")
model = get_peft_model(model, lora)
model.print_trainable_parameters()

data = Dataset.from_dict({"text": [f"{r['question']} {r['answer']}" for r in qa_rows()]})
data = data.map(lambda b: tokenizer(b["text"]), batched=True, remove_columns=["text"])
loader = DataLoader(data, batch_size=8, shuffle=True,
                    collate_fn=DataCollatorForLanguageModeling(tokenizer, mlm=False))
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
model.train()
for step, batch in enumerate(loader):
    loss = model(**batch).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print(f"step {step + 1} loss {loss.item():.4f}")
