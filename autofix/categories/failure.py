"""The failure a category is matched against: the exception, where it was raised, the
facts of the objects in its frames (:attr:`autofix.types.ExceptionInfo.facts`) and the
run's probe report, with readers for the facts categories check.

A fact is a summary the child made of a local value (``autofix/run/child/facts.py``): a
tensor's dtype, shape and label statistics, a mapping's keys, a dataset's columns. A
category's ``check`` reads them through :class:`Failure` and answers ``True`` (the facts
show this fault), ``False`` (they show another: the category must not fire) or ``None``
(the facts that would tell are not there).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from autofix.categories.sites import SITES, all_frames, frame_keys, raised_site
from autofix.types import ExceptionInfo, FrameFacts, ProbeReport

Value = Mapping[str, Any]
_SITE_PATTERNS = {name: re.compile(pattern) for name, pattern in SITES}


@dataclass(frozen=True)
class Failure:
    """One failed run as the categories see it: ``exc`` (the exception, its chain
    included), ``site`` (where it was raised, :func:`autofix.categories.sites.raised_site`),
    ``frames`` (``"file:function: text"`` of every frame of the chain) and ``probe`` (the
    facts the probe reported over the run)."""

    exc: ExceptionInfo
    site: str = ""
    frames: tuple[str, ...] = ()
    probe: ProbeReport = field(default_factory=ProbeReport)
    #: The innermost line of the user's script in the traceback, as the diagnosis names
    #: it: ``(file name, line, the line's text)``; empty when unknown (a saved example).
    user_line: tuple[str, int, str] | tuple[()] = ()

    def frame_facts(self) -> Iterator[FrameFacts]:
        """The facts of every frame the child described, innermost first, the
        exception's own before those of the exceptions it was chained from."""
        for candidate in (self.exc, *self.exc.chain):
            yield from candidate.facts

    @property
    def has_facts(self) -> bool:
        """True when the child described the failing frames (a run under the probe)."""
        return any(True for _ in self.frame_facts())

    def at(self, site: str) -> Iterator[FrameFacts]:
        """The described frames that belong to ``site`` (a name of
        :data:`~autofix.categories.sites.SITES`), innermost first."""
        pattern = _SITE_PATTERNS[site]
        for frame in self.frame_facts():
            if pattern.search(f"{frame.file.replace(chr(92), '/')}:{frame.function}: "):
                yield frame

    def value(self, *names: str, site: str = "", user: bool | None = None) -> Value | None:
        """The summary of the innermost local named one of ``names`` (in that order of
        preference within a frame), in a frame of ``site`` when given, in the user's or
        the libraries' frames when ``user`` is given; ``None`` when no frame has it."""
        frames = self.at(site) if site else self.frame_facts()
        for frame in frames:
            if user is not None and frame.user is not user:
                continue
            for name in names:
                if name in frame.values:
                    return frame.values[name]
        return None

    def summaries(self, kind: str = "", type_pattern: str = "", user: bool | None = None
                  ) -> Iterator[Value]:
        """Every summary of the described frames, innermost first, whose ``kind`` is
        ``kind`` (``"model"``, ``"mapping"``...; "" any) and whose ``type`` (the value's
        qualified class name) matches the regex ``type_pattern`` ("" any), in the user's or
        the libraries' frames when ``user`` is given."""
        for frame in self.frame_facts():
            if user is not None and frame.user is not user:
                continue
            for value in frame.values.values():
                if kind and value.get("kind") != kind:
                    continue
                if type_pattern and not re.search(type_pattern, str(value.get("type", ""))):
                    continue
                yield value

    def where(self) -> str:
        """The user's line as advice names it (``"train.py, line 15: `loss = f(x, y)`"``),
        "" when unknown."""
        if not self.user_line:
            return ""
        name, line, text = self.user_line
        return f"{name}, line {line}" + (f": `{text.strip()}`" if text.strip() else "")

    def lead(self) -> str:
        """:meth:`where` as the opening of an advice (``"train.py, line 15: `...`: "``),
        "" when unknown."""
        where = self.where()
        return f"{where}: " if where else ""

    def user_frames(self) -> list[FrameFacts]:
        """The described frames in the user's own files, innermost first."""
        return [f for f in self.frame_facts() if f.user]


def shape(value: Value | None) -> tuple[int, ...] | None:
    """The shape of a tensor or array summary (``None`` for anything else)."""
    if value is None or value.get("kind") not in ("tensor", "array"):
        return None
    return tuple(int(s) for s in value.get("shape", ()))


def numel(dims: tuple[int, ...]) -> int:
    """The number of elements of a tensor of shape ``dims`` (1 for a scalar's ``()``)."""
    out = 1
    for d in dims:
        out *= d
    return out


def is_integer(value: Value | None) -> bool:
    """A tensor or array of an integer dtype."""
    dtype = str((value or {}).get("dtype", ""))
    return bool(re.search(r"int|long", dtype)) and "uint8" not in dtype or dtype == "torch.uint8"


def is_float(value: Value | None) -> bool:
    """A tensor or array of a floating dtype."""
    return bool(re.search(r"float|double|half|bfloat", str((value or {}).get("dtype", ""))))


def dtype(value: Value | None) -> str:
    """The dtype of a tensor or array summary without its module (``float64``)."""
    return str((value or {}).get("dtype", "")).removeprefix("torch.")


@dataclass(frozen=True)
class LabelsAtLoss:
    """Labels against the head where a classification loss raised: the targets'
    summary, the logits' summary, the number of outputs (the logits' last dimension) and
    the loss function's frame name (``cross_entropy``, ``binary_cross_entropy_with_logits``,
    ``nll_loss``)."""

    target: Value
    logits: Value
    width: int
    loss: str

    @property
    def negatives(self) -> int:
        return int(self.target.get("negatives", 0) or 0)

    @property
    def min(self) -> float | None:
        value = self.target.get("min")
        return None if value is None else float(value)

    @property
    def max(self) -> float | None:
        value = self.target.get("max")
        return None if value is None else float(value)


def labels_at_loss(failure: Failure) -> LabelsAtLoss | None:
    """The targets and logits of the innermost loss frame (torch's functional losses name
    them ``target`` and ``input``), or ``None`` when the facts are not there."""
    for frame in failure.at("loss"):
        target, logits = frame.values.get("target"), frame.values.get("input")
        dims = shape(logits)
        if target is not None and dims:
            return LabelsAtLoss(target, logits, dims[-1], frame.function)  # type: ignore[arg-type]
    return None


def failure_of(probe: ProbeReport) -> Failure | None:
    """The :class:`Failure` of ``probe``'s exception (its site and frame keys worked out),
    ``None`` when the run raised nothing. For a category's ``advice``, which gets the probe
    report (whose ``exception`` is the one being diagnosed, a preflight finding's too)."""
    exc = probe.exception
    if exc is None:
        return None
    frames = tuple(key for candidate in (exc, *exc.chain)
                   for key in frame_keys(all_frames(candidate)))
    return Failure(exc, raised_site(exc), frames, probe)


def library_frames(failure: Failure, limit: int = 0) -> list[FrameFacts]:
    """The described frames outside the user's files, innermost first (the first
    ``limit`` of them when given: the boundary that raised and its callers)."""
    frames = [f for f in failure.frame_facts() if not f.user]
    return frames[:limit] if limit else frames


def number_in(text: str) -> float | None:
    """The number a string spells (``"5e-5"``, ``" 16 "``), or ``None``."""
    try:
        value = float(text.strip())
    except (TypeError, ValueError):
        return None
    return value if value == value and value not in (float("inf"), float("-inf")) else None


def kind(value: Value | None) -> str:
    """The summary's kind (``tensor``, ``mapping``, ``dataset``...; "" for no value)."""
    return str((value or {}).get("kind", ""))


def type_name(value: Value | None) -> str:
    """The qualified class name of the summarised value ("" when not recorded)."""
    return str((value or {}).get("type", ""))


def is_model_output(value: Value | None) -> bool:
    """A transformers ``ModelOutput`` (``SequenceClassifierOutput``...): summarised as a
    mapping of its set fields."""
    return kind(value) == "mapping" and type_name(value).startswith("transformers.") \
        and type_name(value).endswith("Output")


def user_values(failure: Failure, name: str) -> list[Value]:
    """The summaries of the local ``name`` in the user's frames, innermost first."""
    return [f.values[name] for f in failure.user_frames() if name in f.values]


@dataclass(frozen=True)
class HeadAtFailure:
    """The classification head and what reached it, read in the model's ``forward`` frame
    that raised (transformers' ``*ForSequenceClassification.forward`` names them ``self``,
    ``labels``, ``logits``, ``input_ids``): the model summary (``type``, ``num_labels``,
    ``problem_type``), the labels, the logits and the input ids (``None`` when absent)."""

    model: Value
    labels: Value | None
    logits: Value | None
    input_ids: Value | None

    @property
    def model_class(self) -> str:
        return str(self.model.get("type", "")).rsplit(".", 1)[-1]

    @property
    def num_labels(self) -> int | None:
        value = self.model.get("num_labels")
        return value if isinstance(value, int) else None

    @property
    def problem_type(self) -> str | None:
        value = self.model.get("problem_type")
        return value if isinstance(value, str) else None


def head_at_failure(failure: Failure) -> HeadAtFailure | None:
    """The innermost model ``forward`` frame whose ``self`` is a model with a head
    (``num_labels``), else the innermost frame holding such a model as ``model``
    (``Trainer.compute_loss``), with the labels and logits found there; ``None`` when no
    frame shows a model."""
    for frame in failure.frame_facts():
        for name in ("self", "model"):
            model = frame.values.get(name)
            if model is not None and model.get("kind") == "model" and "num_labels" in model:
                values = frame.values
                inputs = values.get("inputs") or {}
                nested = inputs.get("values", {}) if inputs.get("kind") == "mapping" else {}
                return HeadAtFailure(model, values.get("labels") or nested.get("labels"),
                                     values.get("logits"),
                                     values.get("input_ids") or nested.get("input_ids"))
    return None


_LABEL_IN_MESSAGE = re.compile(r"Target (-?\d+) is out of bounds|"
                               r"Received a label value of (-?\d+) which is outside")


def label_in_message(message: str) -> int | None:
    """The label value an out-of-range message names (torch's ``Target 3 is out of
    bounds.``, TensorFlow's ``Received a label value of -100 which is outside the valid
    range``), else ``None``."""
    found = _LABEL_IN_MESSAGE.search(message)
    if found is None:
        return None
    return int(found.group(1) or found.group(2))


_SIZES = re.compile(r"\(torch\.Size\(\[([\d, ]*)\]\)\)")


def sizes_in_message(message: str) -> list[tuple[int, ...]]:
    """The ``torch.Size([...])`` shapes a message names, in order (``Target size
    (torch.Size([16, 5])) must be the same as input size (torch.Size([16, 2]))`` gives
    ``[(16, 5), (16, 2)]``)."""
    return [tuple(int(s) for s in found.split(",") if s.strip())
            for found in _SIZES.findall(message)]


def user_values_of_kind(failure: Failure, kind: str) -> list[tuple[str, Value]]:
    """``(name, summary)`` of the locals of ``kind`` (``dataset``, ``dataframe``,
    ``array``, ...) in the user's frames, innermost frame first."""
    return [(name, value) for frame in failure.user_frames()
            for name, value in frame.values.items() if value.get("kind") == kind]


def is_int_list(value: Value | None, length: int | None) -> bool:
    """A list or tuple of ``length`` Python ints (the items the child sampled are all
    ints): class ids kept as a list, to become ``torch.tensor(...)``."""
    items = (value or {}).get("items") or ()
    return kind(value) in ("list", "tuple") and length is not None and \
        (value or {}).get("len") == length and bool(items) and \
        all(i.get("type") == "int" for i in items)


def dataset_with_column(failure: Failure, column: str) -> str:
    """The name of the user's ``datasets`` split (or ``DatasetDict``) that has ``column``,
    the one with most rows first; "" when no user frame holds one."""
    splits = sorted(user_values_of_kind(failure, "dataset"),
                    key=lambda item: -int(item[1].get("num_rows") or 0))
    for name, value in splits:
        if column in (value.get("columns") or ()):
            return name
    for name, value in user_values_of_kind(failure, "datasetdict"):
        if any(column in cols for cols in (value.get("splits") or {}).values()):
            return name
    return ""


def is_one_hot(value: Value | None) -> bool:
    """A 2-D 0/1 tensor or array whose every row holds exactly one 1 (the child's
    ``one_hot`` fact)."""
    return bool((value or {}).get("one_hot")) and len(shape(value) or ()) == 2


def is_zero_one(value: Value | None) -> bool:
    """Every value read is 0 or 1 (multi-hot or one-hot rows, binary class ids)."""
    distinct = (value or {}).get("distinct")
    return isinstance(distinct, list) and bool(distinct) and set(distinct) <= {0, 1} \
        and not (value or {}).get("ignored") and not (value or {}).get("negatives")


def _scores(value: Value) -> tuple[int, ...] | None:
    """The shape of a float tensor or array of per-class scores (logits): at least one
    row of ``C >= 2`` values that are not all whole numbers; ``None`` for anything else."""
    dims = shape(value)
    if not dims or dims[-1] < 2 or not is_float(value) or value.get("integral") is True:
        return None
    return dims


def logits_with_class_ids(failure: Failure) -> tuple[str, str] | None:
    """Scores beside the class ids they should be compared with, in one described frame:
    a float array or tensor of shape ``(..., C)`` (``C >= 2``, not whole numbers) and an
    integer one of shape ``(...)`` (the scores' shape without its last dimension), as a
    metric that is given logits instead of predicted classes sees them (sklearn's
    ``y_pred``/``y_true``, ``compute_metrics``'s ``predictions``/``labels``). Returns the
    two local names, or ``None``."""
    for frame in failure.frame_facts():
        scores = {name: dims for name, v in frame.values.items()
                  if (dims := _scores(v)) is not None}
        for name, v in frame.values.items():
            ids = shape(v)
            if ids is None or not is_integer(v) or not ids:
                continue
            for score_name, dims in scores.items():
                if dims[:-1] == ids:
                    return score_name, name
    return None


@dataclass(frozen=True)
class IdsAtEmbedding:
    """Token ids against the embedding matrix where the lookup raised: ``rows`` (the
    matrix's first dimension, the ids it can look up are ``0 .. rows - 1``), ``max_id`` (the
    largest id looked up, ``None`` when not measured) and the tokenizers the user's frames
    held (summaries with ``vocab_size`` and ``len``, added tokens included)."""

    rows: int
    max_id: int | None
    tokenizers: tuple[Value, ...]

    @property
    def beyond(self) -> bool:
        """An id at or past the last row was looked up (``False`` when not measured)."""
        return self.max_id is not None and self.max_id >= self.rows

    def with_added_tokens(self) -> list[Value]:
        """The tokenizers grown by added tokens past the matrix's rows."""
        return [t for t in self.tokenizers
                if int(t.get("len", 0)) > int(t.get("vocab_size", 0))
                and int(t.get("len", 0)) > self.rows]

    def larger(self) -> list[Value]:
        """The tokenizers whose own vocabulary (before added tokens) is larger than the
        matrix: a model built for another vocabulary."""
        return [t for t in self.tokenizers if int(t.get("vocab_size", 0)) > self.rows]


def ids_at_embedding(failure: Failure) -> IdsAtEmbedding | None:
    """The ids and the matrix of the failing embedding lookup (``torch.nn.functional.
    embedding``'s ``input`` and ``weight``), ``None`` when that frame was not described."""
    weight = shape(failure.value("weight", site="embedding"))
    if weight is None or len(weight) != 2:
        return None
    ids = failure.value("input", site="embedding")
    top = ids.get("max") if ids is not None and is_integer(ids) else None
    return IdsAtEmbedding(weight[0], int(top) if isinstance(top, int) else None,
                          tuple(failure.summaries(kind="tokenizer")))


@dataclass(frozen=True)
class Encoder:
    """A pretrained model inside the failing layer's model (the child's ``placed``
    facts): its qualified name there (``"encoder"``, ``""`` for the model itself), its
    class, its ``config.hidden_size`` and the names the user's frames bind it to."""

    path: str
    type: str
    hidden_size: int
    names: tuple[str, ...]


@dataclass(frozen=True)
class LayerAtFailure:
    """The torch layer whose ``forward`` raised, and what reached it: its class
    (qualified), its sizes (``in_features``, ``out_features``, channels...:
    ``autofix/run/child/layers.py``), the input's shape, and where it sits (``path``, its
    qualified name in the model the frames held, ``""`` when not found; ``owner``, the
    class holding it as an attribute; ``root``, the model's class, and ``root_names``, the
    user's names for the model; ``encoders``, the pretrained models inside it)."""

    type: str
    sizes: Mapping[str, Any]
    input_shape: tuple[int, ...] | None
    path: str = ""
    owner: str = ""
    root: str = ""
    root_names: tuple[str, ...] = ()
    encoders: tuple[Encoder, ...] = ()

    @property
    def short_type(self) -> str:
        return self.type.rsplit(".", 1)[-1]

    def size(self, name: str) -> int | None:
        """An int size of the layer (``in_features``), ``None`` when it has none."""
        value = self.sizes.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def encoder_of(self, width: int) -> Encoder | None:
        """The one pretrained encoder whose ``hidden_size`` is ``width`` (the features
        the layer got are that encoder's hidden states), ``None`` when none or several
        have it."""
        found = [e for e in self.encoders if e.hidden_size == width]
        return found[0] if len(found) == 1 else None


def layer_at_failure(failure: Failure) -> LayerAtFailure | None:
    """The innermost library frame whose ``self`` is a sized torch layer (the child's
    ``layer`` facts) and whose ``input`` is a tensor: the layer that refused its input.
    ``None`` when the facts do not show one."""
    for frame in failure.frame_facts():
        if frame.user:
            continue
        layer = frame.values.get("self")
        if layer is None or not isinstance(layer.get("layer"), Mapping):
            continue
        placed = layer.get("placed") or {}
        encoders = tuple(
            Encoder(str(e.get("path", "")), str(e.get("type", "")), int(e["hidden_size"]),
                    tuple(str(n) for n in e.get("names") or ()))
            for e in placed.get("encoders") or () if isinstance(e.get("hidden_size"), int))
        return LayerAtFailure(
            str(layer.get("type", "")), dict(layer["layer"]), shape(frame.values.get("input")),
            str(placed.get("path", "")), str(placed.get("owner", "")),
            str(placed.get("root", "")), tuple(str(n) for n in placed.get("root_names") or ()),
            encoders)
    return None


def backward_tensor(failure: Failure) -> Value | None:
    """The summary of the tensor ``backward()`` was called on: ``self`` of torch's
    ``Tensor.backward`` frame, else the first of the ``tensors`` ``torch.autograd.backward``
    got; ``None`` when no such frame was described."""
    for frame in failure.frame_facts():
        where = frame.file.replace(chr(92), "/")
        if frame.user or frame.function != "backward":
            continue
        if where.endswith("torch/_tensor.py") and kind(frame.values.get("self")) == "tensor":
            return frame.values["self"]
        items = (frame.values.get("tensors") or {}).get("items") or ()
        if where.endswith("torch/autograd/__init__.py") and items and kind(items[0]) == "tensor":
            return items[0]  # type: ignore[no-any-return]
    return None


@dataclass(frozen=True)
class LossShapes:
    """The shapes a torch loss got where it raised: its ``input`` (the scores) and its
    ``target``, and the loss function's frame name (``cross_entropy``, ``nll_loss``)."""

    input: tuple[int, ...]
    target: tuple[int, ...]
    loss: str

    @property
    def token_level(self) -> str:
        """How the scores and targets of a token-level loss fail to line up: ``"both"``
        (``(batch, time, classes)`` scores with ``(batch, time)`` targets, neither
        flattened), ``"target"`` (the scores flattened to ``(batch*time, classes)``, the
        targets still ``(batch, time)``), ``""`` for any other pair of shapes."""
        if len(self.input) == 3 and len(self.target) == 2 and \
                self.input[:2] == self.target and self.input[2] != self.target[1]:
            return "both"
        if len(self.input) == 2 and len(self.target) == 2 and self.target[1] > 1 and \
                self.target[0] * self.target[1] == self.input[0]:
            return "target"
        return ""


def loss_shapes(failure: Failure) -> LossShapes | None:
    """The input and target shapes of the innermost loss frame (torch's functional
    losses), ``None`` when the facts do not show both."""
    for frame in failure.at("loss"):
        scores, target = shape(frame.values.get("input")), shape(frame.values.get("target"))
        if scores is not None and target is not None:
            return LossShapes(scores, target, frame.function)
    return None


def is_numpy_scalar(value: Value | None) -> bool:
    """A numpy scalar (``np.int64``, ``np.float32``): summarised as a 0-d array."""
    return kind(value) == "array" and shape(value) == () and "<" not in dtype(value)


@dataclass(frozen=True)
class JsonRefusal:
    """A numpy scalar the standard ``json`` encoder refused: as a mapping's ``key`` or as
    a ``value``, its summary, and the encoder's ``dtype`` family (``int`` or ``float``)."""

    part: str
    scalar: Value

    @property
    def python_type(self) -> str:
        """The Python type the value must be converted to: ``int``, ``float`` or ``bool``."""
        found = dtype(self.scalar)
        return "float" if "float" in found else "bool" if found == "bool" else "int"


def json_refusal(failure: Failure) -> JsonRefusal | None:
    """The numpy scalar that ``json``'s encoder refused (``Object of type int64 is not
    JSON serializable``: the ``o`` its ``default`` got; ``keys must be str, int, ...``: the
    ``key`` of ``_iterencode_dict``), ``None`` when the facts show no numpy scalar there."""
    for frame in failure.frame_facts():
        if frame.user or not frame.file.replace(chr(92), "/").endswith("json/encoder.py"):
            continue
        if frame.function == "default" and is_numpy_scalar(frame.values.get("o")):
            return JsonRefusal("value", frame.values["o"])
        if frame.function == "_iterencode_dict" and "keys must be" in failure.exc.message \
                and is_numpy_scalar(frame.values.get("key")):
            return JsonRefusal("key", frame.values["key"])
    found = re.search(r"(?:not|Object of type) (u?int(?:8|16|32|64)|float(?:16|32|64)|bool_)\b",
                      failure.exc.message)
    if found is None:  # the C encoder (json.dumps without indent) leaves no frame: the name
        return None
    return JsonRefusal("key" if "keys must be" in failure.exc.message else "value",
                       {"kind": "array", "dtype": found.group(1).rstrip("_"), "shape": []})
