"""Facts at the failure: what the objects in the failing frames were.

When a run fails, the probe summarises the local values of the frames that matter: the
innermost frames of the library boundary that raised (a loss function, a collator, a
model's ``forward``, ``compute_metrics``, ``Dataset.map``, an optimizer's constructor) and
the innermost frames in the user's own files. A summary is small JSON: a tensor's dtype,
shape, device and, for integer or integral values, the label facts a category needs (min,
max, negatives, the -100 ignore index, a few distinct values); a mapping's keys; a
dataset's columns, features, rows and output format; a sequence's length and first items; a
model's class and head (``num_labels``, ``problem_type``) and how many of its parameters
train; a tokenizer's vocabulary and length (added tokens included); a ``DataLoader``'s
batch size, collate function and dataset; an ``argparse`` namespace's values and a
parser's long options; the fields of a dataclass of settings (``TrainingArguments``) whose
value is a string where the field is declared a number. Categories match on these facts;
the message is one more fact.

Standard library only (it runs inside the user's interpreter); libraries are recognised
by duck typing, never imported. Every summary is bounded and never raises.
"""

from __future__ import annotations

import itertools
import math
import os
import sys
import types
from collections.abc import Mapping
from typing import Any

from .layers import layer_sizes, placement

#: Frames of the library boundary kept, innermost first (the frame that raised and the
#: library frames just outside it: ``cross_entropy`` inside the model's ``forward``
#: inside ``Trainer.compute_loss``).
LIBRARY_FRAMES = 6
#: Call wrappers whose frames hold only ``args``/``kwargs`` on their way to the real
#: function: skipped, so they do not use up :data:`LIBRARY_FRAMES`.
WRAPPERS = ("torch/nn/modules/module.py", "torch/utils/_contextlib.py",
            "transformers/utils/generic.py", "accelerate/hooks.py",
            "accelerate/utils/operations.py", "torch/_dynamo/")
#: Frames in the user's own files kept, innermost first.
USER_FRAMES = 3
#: Local values summarised per frame, and items / keys shown per container.
MAX_LOCALS = 24
MAX_ITEMS = 6
#: Long options listed of a command-line parser (``TrainingArguments`` alone has ~250).
MAX_OPTIONS = 600
#: Tensors and arrays above this many elements get no value statistics (shape and dtype
#: only): an embedding matrix says nothing about labels.
MAX_STAT_ELEMENTS = 5_000_000
#: The ignore index of torch's and transformers' losses (labels the loss skips).
IGNORE_INDEX = -100


def _short(value: Any, limit: int = 80) -> str:
    text = str(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _type_name(value: Any) -> str:
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"


def _number(value: float) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _integer_stats(values: list[int]) -> dict[str, Any]:  # numpy arrays, as Python ints
    """min/max over the values the loss reads (the ignore index left out), the counts of
    negatives and of ignored values, and up to 20 distinct values."""
    kept = [v for v in values if v != IGNORE_INDEX]
    out: dict[str, Any] = {"ignored": len(values) - len(kept),
                           "negatives": sum(1 for v in kept if v < 0)}
    if kept:
        out["min"], out["max"] = min(kept), max(kept)
        distinct = sorted(set(kept))
        out["distinct"] = distinct[:20]
        out["n_distinct"] = len(distinct)
    return out


def _float_stats(values: list[float]) -> dict[str, Any]:
    finite = [v for v in values if math.isfinite(v)]
    out: dict[str, Any] = {"nonfinite": len(values) - len(finite)}
    if finite:
        out["min"], out["max"] = _number(min(finite)), _number(max(finite))
        out["integral"] = all(float(v).is_integer() for v in finite)
        if out["integral"]:
            out["distinct"] = sorted(set(int(v) for v in finite))[:20]
    return out


def _tensor(value: Any) -> dict[str, Any]:
    """A torch tensor (duck-typed: ``dtype``, ``shape``, ``device``, ``numel``), its value
    statistics computed with the tensor's own methods (no copy to Python lists)."""
    out: dict[str, Any] = {"kind": "tensor", "dtype": str(value.dtype),
                           "shape": [int(s) for s in value.shape], "device": str(value.device)}
    if getattr(value, "requires_grad", False):
        out["requires_grad"] = True
    if not value.numel() or value.numel() > MAX_STAT_ELEMENTS or value.is_complex() \
            or str(value.dtype) == "torch.bool":
        return out
    flat = value.detach().reshape(-1)
    if value.is_floating_point():
        finite = flat.isfinite()
        out["nonfinite"] = int((~finite).sum().item())
        kept = flat[finite]
        if kept.numel():
            out["min"], out["max"] = float(kept.min().item()), float(kept.max().item())
            out["integral"] = bool((kept == kept.round()).all().item())
            if out["integral"]:
                distinct = kept.unique()
                out["distinct"] = [int(v) for v in distinct[:20].tolist()]
                out["n_distinct"] = int(distinct.numel())
                out.update(_rows(value, out["distinct"]))
        return out
    kept = flat[flat != IGNORE_INDEX]
    out["ignored"] = int(flat.numel() - kept.numel())
    out["negatives"] = int((kept < 0).sum().item())
    if kept.numel():
        out["min"], out["max"] = int(kept.min().item()), int(kept.max().item())
        distinct = kept.unique()
        out["distinct"] = [int(v) for v in distinct[:20].tolist()]
        out["n_distinct"] = int(distinct.numel())
        if not out["ignored"]:
            out.update(_rows(value, out["distinct"]))
    return out


def _rows(value: Any, distinct: list[int]) -> dict[str, Any]:
    """For a 2-D tensor or array of 0/1 values (one-hot or multi-hot label rows): whether
    every row holds exactly one 1 (``one_hot``) and the columns that hold a 1 anywhere
    (``hot_columns``, up to 64 columns)."""
    if len(value.shape) != 2 or not set(distinct) <= {0, 1} or not 0 < value.shape[1] <= 64:
        return {}
    sums = value.sum(1)
    used = value.sum(0)
    rows = [float(v) for v in (sums.tolist() if hasattr(sums, "tolist") else sums)]
    columns = [float(v) for v in (used.tolist() if hasattr(used, "tolist") else used)]
    return {"one_hot": all(r == 1 for r in rows),
            "hot_columns": [i for i, c in enumerate(columns) if c > 0]}


def _array(value: Any) -> dict[str, Any]:
    """A numpy array (duck-typed: ``dtype.kind``, ``shape``, ``ravel``)."""
    kind = value.dtype.kind
    out: dict[str, Any] = {"kind": "array", "dtype": str(value.dtype),
                           "shape": [int(s) for s in value.shape]}
    if value.size and value.size <= MAX_STAT_ELEMENTS:
        if kind in "iu":
            out.update(_integer_stats([int(v) for v in value.ravel().tolist()]))
        elif kind == "f":
            out.update(_float_stats([float(v) for v in value.ravel().tolist()]))
        if kind in "iuf" and "distinct" in out and not out.get("ignored"):
            out.update(_rows(value, out["distinct"]))
        elif kind == "O":
            first = value.ravel()[0]
            out["item"] = describe_value(first, depth=1)
    return out


def _dataset(value: Any) -> dict[str, Any]:
    """A ``datasets.Dataset`` (columns, rows, features, the output format: ``None`` for
    Python lists, ``"torch"``...) or ``DatasetDict`` (its splits' columns, and the first
    :data:`MAX_SPLITS` splits summarised as datasets)."""
    if hasattr(value, "column_names") and isinstance(value.column_names, dict):
        return {"kind": "datasetdict", "type": _type_name(value),
                "splits": {k: list(v)[:30] for k, v in list(value.column_names.items())[:8]},
                "datasets": {k: _dataset(value[k])
                             for k in list(value.column_names)[:MAX_SPLITS]}}
    features = getattr(value, "features", None) or {}
    out = {"kind": "dataset", "type": _type_name(value),
           "columns": list(value.column_names)[:40],
           "num_rows": int(value.num_rows) if hasattr(value, "num_rows") else None,
           "features": {k: _short(v, 120) for k, v in list(features.items())[:20]}}
    form = getattr(value, "format", None)
    if isinstance(form, Mapping):
        out["format"] = form.get("type")
    ranges = _int_ranges(value, features)
    if ranges:
        out["ranges"] = ranges
    return out


#: The splits of a ``DatasetDict`` summarised each as a dataset (``data["train"]`` given to
#: ``Trainer`` is read there).
MAX_SPLITS = 3
#: Integer scalar columns whose values a dataset summary measures (a label kept under
#: another name), and the most rows measured (``Dataset.unique`` reads the whole column).
RANGE_COLUMNS = 4
RANGE_ROWS = 200_000
_MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids", "position_ids",
                 "special_tokens_mask", "decoder_input_ids", "decoder_attention_mask")


def _int_ranges(value: Any, features: Any) -> dict[str, Any]:
    """``{column: {"min", "max", "n_distinct"}}`` of up to :data:`RANGE_COLUMNS` integer
    scalar columns that are not model inputs (``Value('int64')``, ``ClassLabel``)."""
    rows = getattr(value, "num_rows", None)
    if not isinstance(rows, int) or rows > RANGE_ROWS or not hasattr(value, "unique"):
        return {}
    out: dict[str, Any] = {}
    for name, feature in list(features.items())[:40]:
        dtype = str(getattr(feature, "dtype", ""))
        if name in _MODEL_INPUTS or type(feature).__name__ not in ("Value", "ClassLabel") \
                or not (dtype.startswith(("int", "uint")) or
                        type(feature).__name__ == "ClassLabel"):
            continue
        values = [v for v in value.unique(name) if isinstance(v, int)]
        if values:
            out[name] = {"min": min(values), "max": max(values), "n_distinct": len(values)}
        if len(out) >= RANGE_COLUMNS:
            break
    return out


def _loader(value: Any, depth: int) -> dict[str, Any]:
    """A torch ``DataLoader`` (duck-typed: ``dataset``, ``batch_size``, ``collate_fn``,
    ``sampler``): its batch size, its collate function by qualified name
    (``torch.utils.data._utils.collate.default_collate`` when none was given) and its
    dataset."""
    collate = value.collate_fn
    name = getattr(collate, "__qualname__", None)
    where = getattr(collate, "__module__", None) if name else type(collate).__module__
    batch = value.batch_size
    return {"kind": "loader", "type": _type_name(value),
            "batch_size": batch if isinstance(batch, (int, type(None))) else
            describe_value(batch, depth + 1),
            "collate_fn": f"{where}.{name or type(collate).__qualname__}",
            "dataset": describe_value(value.dataset, depth + 1)}


#: Field annotations that declare a number (``TrainingArguments.learning_rate: float``).
NUMBER_TYPES = {"int": "int", "float": "float", "Optional[int]": "int",
                "Optional[float]": "float", "int | None": "int", "float | None": "float",
                "Union[int, float]": "float", "float | int": "float", "int | float": "float"}


def _mistyped_fields(value: Any) -> dict[str, Any]:
    """The fields of a dataclass instance declared a number whose value is a string
    (``learning_rate: float`` holding ``"5e-5"``): ``{name: {"value", "expected"}}``."""
    out: dict[str, Any] = {}
    for name, spec in list(value.__dataclass_fields__.items())[:400]:
        annotation = spec.type if isinstance(spec.type, str) else \
            getattr(spec.type, "__name__", str(spec.type))
        expected = NUMBER_TYPES.get(str(annotation).replace("typing.", ""))
        current = getattr(value, name, None)
        if expected and isinstance(current, str):
            out[name] = {"value": _short(current), "expected": expected}
        if len(out) >= MAX_ITEMS:
            break
    return out


def _dataframe(value: Any) -> dict[str, Any]:
    """A pandas ``DataFrame`` (duck-typed: ``columns``, ``dtypes``, ``iloc``): its columns,
    rows, and for each integer column its range and distinct count (a label column read
    by hand: the number of classes)."""
    columns = [str(c) for c in list(value.columns)[:40]]
    out: dict[str, Any] = {"kind": "dataframe", "type": _type_name(value), "columns": columns,
                           "num_rows": int(len(value))}
    ints: dict[str, Any] = {}
    for name in list(value.columns)[:40]:
        column = value[name]
        if getattr(column.dtype, "kind", "") in "iu" and len(column) <= MAX_STAT_ELEMENTS:
            distinct = sorted(int(v) for v in column.unique()[:1001])
            if distinct:
                ints[str(name)] = {"min": distinct[0], "max": distinct[-1],
                                   "n_distinct": len(distinct)}
    out["int_columns"] = ints
    return out


#: Modules walked for :func:`module_names` (a 70B Llama has about 1,300).
MAX_MODULES = 20_000
#: Names kept per list of :func:`module_names`.
MAX_NAMES = 40


def _linear(module: Any) -> bool:
    """A linear layer PEFT can adapt: ``nn.Linear`` and its quantised kin (``Linear4bit``,
    ``Linear8bitLt``), GPT-2's ``Conv1D``."""
    name = type(module).__name__
    return name.startswith("Linear") or name.endswith("Linear") or name == "Conv1D"


def module_names(model: Any) -> dict[str, Any]:
    """The model's real module names, as PEFT's ``target_modules`` match them: the leaf
    names of its linear layers (``linear_names``), and of those the ones found only inside
    attention blocks (a module whose class name has "Attention", or whose own name has
    "attn"/"attention"), in order of appearance (``attention_linear``: Llama's ``q_proj,
    k_proj, v_proj, o_proj``, GPT-2's ``c_attn``, BERT's ``query, key, value``). PEFT's
    own layers (``lora_A``, ``base_layer``...) are left out. ``{}`` when the model has no
    ``named_modules``; never raises."""
    try:
        walked = []
        for i, (path, module) in enumerate(model.named_modules()):
            if i >= MAX_MODULES:
                break
            walked.append((path, module))
    except Exception:  # noqa: BLE001
        return {}
    kinds = {path: type(module).__name__ for path, module in walked}
    inside: list[str] = []
    outside: set[str] = set()
    for path, module in walked:
        parts = path.split(".")
        if not path or not _linear(module) or parts[-1] == "base_layer" or any(
                p.startswith("lora_") or p.startswith("lokr_") for p in parts):
            continue
        ancestors = [".".join(parts[:k]) for k in range(1, len(parts))]
        attention = any("attention" in kinds.get(a, "").lower()
                        or "attn" in a.rsplit(".", 1)[-1].lower()
                        or "attention" in a.rsplit(".", 1)[-1].lower() for a in ancestors)
        if attention:
            if parts[-1] not in inside:
                inside.append(parts[-1])
        else:
            outside.add(parts[-1])
    names = sorted({*inside, *outside})
    return {"linear_names": names[:MAX_NAMES],
            "attention_linear": [n for n in inside if n not in outside][:MAX_NAMES]}


def _module(value: Any) -> dict[str, Any]:
    """A torch ``nn.Module`` (a model): its class, its config's head, how many of its
    parameter tensors there are and how many require grad (``params``, ``trainable``), the
    numbers of parameters they hold (``params_total``, ``params_trainable``) and its module
    names (:func:`module_names`)."""
    out: dict[str, Any] = {"kind": "model", "type": _type_name(value)}
    sizes = layer_sizes(value)
    if sizes:
        out["layer"] = sizes
    params = list(itertools.islice(value.parameters(), 10_000))
    if params:
        out["params"] = len(params)
        out["trainable"] = sum(1 for p in params if getattr(p, "requires_grad", False))
        try:
            out["params_total"] = sum(p.numel() for p in params)
            out["params_trainable"] = sum(p.numel() for p in params if p.requires_grad)
        except Exception:  # noqa: BLE001
            pass
    out.update(module_names(value))
    config = getattr(value, "config", None)
    if config is not None:
        for name in ("num_labels", "problem_type", "model_type", "vocab_size", "pad_token_id",
                     "max_position_embeddings", "is_encoder_decoder"):
            if hasattr(config, name):
                attr = getattr(config, name)
                out[name] = attr if isinstance(attr, (int, float, str, bool, type(None))) \
                    else _short(attr)
        names = getattr(config, "id2label", None)
        if isinstance(names, Mapping):
            out["id2label_size"] = len(names)
    return out


def _tokenizer(value: Any) -> dict[str, Any]:
    """A Hugging Face tokenizer: its base vocabulary (``vocab_size``) and its length with
    the tokens added to it (``len``: the ids it can produce are ``0 .. len - 1``) and the
    length ``truncation=True`` cuts to (``model_max_length``; ``None`` when unset, which
    transformers stores as a huge number)."""
    out = {"kind": "tokenizer", "type": _type_name(value),
           "vocab_size": int(value.vocab_size), "len": int(len(value))}
    limit = getattr(value, "model_max_length", None)
    if isinstance(limit, int):
        out["model_max_length"] = limit if limit < 10**9 else None
    return out


def _parser(value: Any) -> dict[str, Any]:
    """An ``argparse`` parser (``HfArgumentParser`` too): the long options it knows (up to
    :data:`MAX_OPTIONS`), to name the one a refused option was meant to be."""
    options = sorted(o for o in value._option_string_actions if o.startswith("--"))
    return {"kind": "parser", "type": _type_name(value), "options": options[:MAX_OPTIONS]}


def describe_value(value: Any, depth: int = 0) -> dict[str, Any]:
    """A bounded JSON summary of ``value`` (see the module docstring); never raises."""
    try:
        if value is None or isinstance(value, bool):
            return {"kind": "none" if value is None else "bool", "value": value}
        if isinstance(value, (int, float)):
            return {"kind": "number", "type": type(value).__name__, "value": _number(value)}
        if isinstance(value, str):
            return {"kind": "str", "value": _short(value)}
        if hasattr(value, "dtype") and hasattr(value, "shape") and hasattr(value, "device") \
                and hasattr(value, "numel"):
            return _tensor(value)
        if hasattr(value, "dtype") and hasattr(value, "shape") and hasattr(value, "ravel"):
            return _array(value)
        if hasattr(value, "columns") and hasattr(value, "dtypes") and hasattr(value, "iloc"):
            return _dataframe(value)
        if hasattr(value, "column_names") and hasattr(value, "features") or \
                type(value).__name__ == "DatasetDict":
            return _dataset(value)
        if hasattr(value, "parameters") and hasattr(value, "forward") and \
                hasattr(value, "named_modules"):
            return _module(value)
        if hasattr(value, "dataset") and hasattr(value, "collate_fn") and \
                hasattr(value, "batch_size") and hasattr(value, "sampler"):
            return _loader(value, depth)
        if hasattr(value, "convert_tokens_to_ids") and hasattr(value, "vocab_size") \
                and hasattr(value, "__len__"):
            return _tokenizer(value)
        if hasattr(value, "_option_string_actions") and hasattr(value, "parse_known_args"):
            return _parser(value)
        if type(value).__name__ == "Namespace" and hasattr(value, "__dict__"):  # argparse
            attrs = list(vars(value).items())[:MAX_LOCALS]
            return {"kind": "namespace", "type": _type_name(value),
                    "values": {k: describe_value(v, depth + 1) for k, v in attrs}
                    if depth < 2 else {}}
        if isinstance(value, Mapping) or hasattr(value, "keys") and hasattr(value, "items") \
                and hasattr(value, "__getitem__"):
            keys = [k for k in list(value.keys())[:40]]
            out: dict[str, Any] = {"kind": "mapping", "type": _type_name(value),
                                   "keys": [_short(k) for k in keys]}
            if depth < 2:
                out["values"] = {_short(k): describe_value(value[k], depth + 1)
                                 for k in keys[:MAX_ITEMS * 2]}
            return out
        if isinstance(value, (list, tuple)):
            out = {"kind": type(value).__name__ if type(value) in (list, tuple) else "tuple",
                   "type": _type_name(value), "len": len(value)}
            if depth < 2:
                out["items"] = [describe_value(v, depth + 1) for v in value[:MAX_ITEMS]]
            return out
        if hasattr(value, "predictions") and hasattr(value, "label_ids"):  # EvalPrediction
            return {"kind": "eval-prediction", "type": _type_name(value),
                    "predictions": describe_value(value.predictions, depth + 1),
                    "label_ids": describe_value(value.label_ids, depth + 1)}
        out = {"kind": "object", "type": _type_name(value)}
        if hasattr(value, "__dataclass_fields__"):
            mistyped = _mistyped_fields(value)
            if mistyped:
                out["mistyped"] = mistyped
        return out
    except Exception as exc:  # noqa: BLE001 - a fact we cannot read is left out
        return {"kind": "unreadable", "type": _type_name(value), "error": _short(repr(exc))}


def _is_library(filename: str) -> bool:
    """A file of an installed library or of Python itself (not the user's)."""
    path = os.path.abspath(filename)
    if "site-packages" in path or "dist-packages" in path or filename.startswith("<") \
            or filename.endswith((".pxi", ".pyx")) or not os.path.isfile(path):
        return True  # a compiled extension's source (pyarrow's error.pxi) is no user file
    prefixes = {os.path.abspath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    return any(path.startswith(p + os.sep) for p in prefixes)


def _wanted(name: str, value: Any) -> bool:
    return not name.startswith("__") and not isinstance(
        value, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type,
                types.MethodType))


def _place_layer(out: list[dict[str, Any]], described: list[Any], frames: list[Any],
                 root: str) -> None:
    """Adds ``placed`` (:func:`layers.placement`) to the ``self`` summary of the
    innermost described frame whose ``self`` is a sized torch layer (an ``nn.Linear``'s
    ``forward``): its name in the model the frames hold, and that model's encoders.
    ``described`` holds the frame object of each entry of ``out``; ``frames`` every frame
    of the traceback, outermost first."""
    for entry, frame in zip(out, described, strict=True):
        summary = entry["locals"].get("self")
        if not isinstance(summary, dict) or "layer" not in summary:
            continue
        user = [f.f_locals for f in reversed(frames) if not _is_library(f.f_code.co_filename)
                and (not root or os.path.abspath(f.f_code.co_filename).startswith(
                    os.path.abspath(root)))]
        found = placement(frame.f_locals.get("self"), [f.f_locals for f in frames], user)
        if found:
            summary["placed"] = found
        return


def frame_facts(tb: Any, root: str = "", skip: str = "") -> list[dict[str, Any]]:
    """Facts of the frames of traceback ``tb`` that matter, innermost first: the last
    :data:`LIBRARY_FRAMES` library frames and the last :data:`USER_FRAMES` frames in the
    user's files (under ``root`` when given, else any file that is not a library's), each
    ``{"file", "line", "function", "user", "locals": {name: summary}}``. Frames of the
    file ``skip`` (the probe's own) are left out. Never raises."""
    try:
        frames = []
        while tb is not None:
            frames.append((tb.tb_frame, tb.tb_lineno))
            tb = tb.tb_next
        out: list[dict[str, Any]] = []
        described: list[Any] = []
        library = user = 0
        here = os.path.dirname(os.path.abspath(__file__))
        for frame, line in reversed(frames):
            filename = frame.f_code.co_filename
            if filename == skip or os.path.abspath(filename).startswith(here) \
                    or any(w in filename.replace(os.sep, "/") for w in WRAPPERS):
                continue
            mine = not _is_library(filename) and (
                not root or os.path.abspath(filename).startswith(os.path.abspath(root)))
            if mine and user >= USER_FRAMES or not mine and library >= LIBRARY_FRAMES:
                continue
            if mine:
                user += 1
            else:
                library += 1
            local = {k: v for k, v in list(frame.f_locals.items())[:MAX_LOCALS * 2]
                     if _wanted(k, v)}
            out.append({"file": filename, "line": line, "function": frame.f_code.co_name,
                        "user": mine,
                        "locals": {k: describe_value(v) for k, v in
                                   list(local.items())[:MAX_LOCALS]}})
            described.append(frame)
            if user >= USER_FRAMES and library >= LIBRARY_FRAMES:
                break
        _place_layer(out, described, [f for f, _ in frames], root)
        return out
    except Exception:  # noqa: BLE001 - the facts are a bonus; the failure is reported anyway
        return []
