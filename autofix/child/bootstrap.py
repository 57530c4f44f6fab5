"""The probe: runs inside the child interpreter, around the user's script.

This file is executed by path (``python bootstrap.py ...``) with the user's training
interpreter, where autofix itself is not installed, so it uses the standard library
only and imports ML libraries lazily, never itself.

Usage: ``python bootstrap.py PATCHED_SOURCE ORIGINAL_PATH [SCRIPT_ARGS...]``

Environment:
    AUTOFIX_PROBE_FILE  JSON-lines file the probe appends its events to (required).
    AUTOFIX_MAX_STEPS   stop a ``Trainer`` cleanly after this many optimizer steps
                        (``0`` or unset: no limit).

Events (one JSON object per line, ``"event"`` key): ``versions``, ``trainer`` (datasets
given to ``Trainer`` and the model's ``num_labels``), ``step`` (step, loss),
``budget_reached``, ``exception`` (type, message, frames, chain), ``exit``.
"""

from __future__ import annotations

import builtins
import importlib.abc
import importlib.metadata
import json
import linecache
import math
import os
import sys
import traceback
import types
from typing import Any

_PROBE_FILE = os.environ.get("AUTOFIX_PROBE_FILE", "")
_MAX_STEPS = int(os.environ.get("AUTOFIX_MAX_STEPS", "0") or 0)
_DISTRIBUTIONS = ("torch", "transformers", "datasets", "accelerate", "tensorflow", "tf-keras",
                  "keras", "numpy")
_LABEL_COLUMNS = ("labels", "label", "label_ids")


def emit(event: str, **data: Any) -> None:
    """Append one event to the probe file; never raises into the user's script."""
    if not _PROBE_FILE:
        return
    try:
        with open(_PROBE_FILE, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"event": event, **data}, default=repr) + "\n")
    except Exception:  # noqa: BLE001 - the probe must never break the script
        pass


def versions() -> dict[str, str]:
    found = {}
    for dist in _DISTRIBUTIONS:
        try:
            found[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


def user_traceback(exc: BaseException) -> Any:
    """The exception's traceback without the probe's own frames at its root."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return tb


def describe_exception(exc: BaseException, depth: int = 0) -> dict[str, Any]:
    frames = [
        {"file": f.filename, "line": f.lineno or 0, "function": f.name, "text": f.line or ""}
        for f in traceback.extract_tb(user_traceback(exc))
    ]
    if isinstance(exc, SyntaxError) and exc.filename:
        text = (exc.text or "").rstrip("\n")
        frames.append({"file": exc.filename, "line": exc.lineno or 0, "function": "<module>",
                       "text": text})
    chain = []
    inner = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    if inner is not None and depth < 5:
        chain.append(describe_exception(inner, depth + 1))
    kind = type(exc)
    return {
        "type": f"{kind.__module__}.{kind.__qualname__}",
        "message": str(exc),
        "frames": frames,
        "chain": chain,
    }


# --- Trainer probe -----------------------------------------------------------------


def dataset_facts(role: str, ds: Any) -> dict[str, Any]:
    facts: dict[str, Any] = {"role": role, "columns": list(getattr(ds, "column_names", None) or [])}
    try:
        facts["num_rows"] = len(ds)
    except Exception:  # noqa: BLE001 - IterableDataset and friends have no len
        facts["num_rows"] = None
    column = next((c for c in _LABEL_COLUMNS if c in facts["columns"]), "")
    facts["label_column"] = column
    if not column:
        return facts
    feature = (getattr(ds, "features", None) or {}).get(column)
    if feature is not None and type(feature).__name__ == "ClassLabel":
        facts["label_kind"] = "int"
        facts["label_classes"] = int(feature.num_classes)
        return facts
    try:
        values = [v for v in ds.unique(column) if v is not None]
    except Exception:  # noqa: BLE001 - not a datasets.Dataset
        return facts
    if values and all(isinstance(v, str) for v in values):
        facts["label_kind"] = "str"
    elif values and all(isinstance(v, (int, float)) for v in values):
        facts["label_kind"] = "int" if all(float(v).is_integer() for v in values) else "float"
        facts["label_min"] = min(values)
        facts["label_max"] = max(values)
    return facts


def trainer_facts(trainer: Any) -> dict[str, Any]:
    model = getattr(trainer, "model", None)
    config = getattr(model, "config", None)
    datasets = []
    for role, ds in (("train", trainer.train_dataset), ("eval", trainer.eval_dataset)):
        if isinstance(ds, dict):
            for name, sub in ds.items():
                datasets.append(dataset_facts(f"{role}:{name}", sub))
        elif ds is not None:
            datasets.append(dataset_facts(role, ds))
    return {
        "trainer_class": type(trainer).__name__,
        "model_class": type(model).__name__,
        "num_labels": getattr(config, "num_labels", None),
        "datasets": datasets,
    }


def patch_trainer_module(module: types.ModuleType) -> None:
    """Wrap ``Trainer.__init__`` (facts, step-budget callback) and ``training_step`` (loss)."""
    trainer_cls = getattr(module, "Trainer", None)
    if trainer_cls is None or getattr(trainer_cls, "_autofix_patched", False):
        return
    from transformers.trainer_callback import TrainerCallback  # the child's transformers

    class StepBudget(TrainerCallback):
        """Stops training cleanly (``should_training_stop``) after AUTOFIX_MAX_STEPS steps."""

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            if _MAX_STEPS and state.global_step >= _MAX_STEPS:
                control.should_training_stop = True
                emit("budget_reached", step=state.global_step)
            return control

    original_init = trainer_cls.__init__
    original_step = trainer_cls.training_step

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        try:
            emit("trainer", **trainer_facts(self))
        except Exception as exc:  # noqa: BLE001
            emit("probe_error", where="trainer_facts", message=repr(exc))
        self.add_callback(StepBudget())

    def training_step(self: Any, *args: Any, **kwargs: Any) -> Any:
        loss = original_step(self, *args, **kwargs)
        try:
            value = float(loss.detach().float().mean().item())
        except Exception:  # noqa: BLE001
            value = None
        step = int(getattr(self.state, "global_step", 0)) + 1
        emit("step", step=step, loss=value if value is None or math.isfinite(value) else str(value))
        return loss

    trainer_cls.__init__ = __init__
    trainer_cls.training_step = training_step
    trainer_cls._autofix_patched = True


class PostImportHook(importlib.abc.MetaPathFinder):
    """Calls ``patch`` on a module right after it is executed, whoever imports it.

    ``transformers`` loads ``transformers.trainer`` lazily on first attribute access; the
    finder wraps that module's loader so the patch applies however the script imports it.
    """

    def __init__(self, name: str, patch: Any) -> None:
        self.name = name
        self.patch = patch

    def _wrap(self, fullname: str, exec_module: Any) -> Any:
        patch = self.patch

        def exec_and_patch(module: types.ModuleType) -> None:
            exec_module(module)
            try:
                patch(module)
            except Exception as exc:  # noqa: BLE001
                emit("probe_error", where=fullname, message=repr(exc))

        return exec_and_patch

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader.exec_module = self._wrap(  # type: ignore[method-assign]
                    fullname, spec.loader.exec_module)
                return spec
        return None


# --- running the script ------------------------------------------------------------


def run(patched: str, original: str, argv: list[str]) -> int:
    with open(patched, encoding="utf-8") as fh:
        source = fh.read()
    # Tracebacks name the user's path but must show the patched file's lines.
    lines = source.splitlines(keepends=True)
    linecache.cache[original] = (len(source), None, lines, original)

    sys.argv = [original, *argv]
    sys.path[0] = os.path.dirname(os.path.abspath(original))
    sys.meta_path.insert(0, PostImportHook("transformers.trainer", patch_trainer_module))
    emit("versions", versions=versions())

    main = types.ModuleType("__main__")
    main.__file__ = original
    main.__builtins__ = builtins  # type: ignore[attr-defined]
    sys.modules["__main__"] = main
    try:
        code = compile(source, original, "exec", dont_inherit=True)
        exec(code, main.__dict__)
    except SystemExit as exc:
        code_ = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if code_ != 0:
            emit("exception", **describe_exception(exc))
        emit("exit", code=code_)
        raise
    except BaseException as exc:
        emit("exception", **describe_exception(exc))
        emit("exit", code=1)
        traceback.print_exception(type(exc), exc, user_traceback(exc))
        return 1
    emit("exit", code=0)
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.stderr.write("usage: bootstrap.py PATCHED_SOURCE ORIGINAL_PATH [ARGS...]\n")
        sys.exit(2)
    sys.exit(run(sys.argv[1], sys.argv[2], sys.argv[3:]))
