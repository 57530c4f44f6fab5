"""Faults of values, types and tensors at the failing boundary: the dtype or length of a
tensor the loss is given, a string where a number is needed, a model's output object where
a tensor is needed, an extra batch dimension, a loss computed without a graph.

Each category is recognised from the facts at the failure (``autofix/run/child/facts.py``
summaries of the failing frames' locals, read through
:class:`~autofix.categories.failure.Failure`); the message is one more fact. Every
``check`` states the facts it needs and answers ``None`` without them, so a category here
never fires on the wording alone (``needs_facts``). Measured on transformers 5.24 / torch
2.13 CPU (``sample_scripts/corpus``: d11, d12, d41, d42, d45, d46, d68, d70, d71).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from autofix.categories.failure import (
    Failure,
    Value,
    backward_tensor,
    dtype,
    failure_of,
    is_float,
    is_model_output,
    kind,
    library_frames,
    number_in,
    shape,
)
from autofix.categories.model import Category
from autofix.types import ProbeReport

#: The loss arguments that weigh classes (``CrossEntropyLoss(weight=)``,
#: ``BCEWithLogitsLoss(pos_weight=)``).
WEIGHT_ARGS = ("weight", "pos_weight")


def class_weights_at_loss(failure: Failure) -> tuple[Value, Value] | None:
    """(the class-weight tensor, the logits) of the innermost loss frame given weights."""
    for frame in failure.at("loss"):
        logits = frame.values.get("input")
        for name in WEIGHT_ARGS:
            weight = frame.values.get(name)
            if kind(weight) == "tensor" and kind(logits) == "tensor":
                return weight, logits  # type: ignore[return-value]
    return None


def _class_dim(logits: Value) -> int | None:
    """The number of classes of a loss input: dim 1 of (N, C, ...), the only dim of (C,)."""
    dims = shape(logits)
    if not dims:
        return None
    return dims[1] if len(dims) >= 2 else dims[0]


def weights_dtype_differs(failure: Failure) -> bool | None:
    """The loss's class weights and its logits are floats of two dtypes (a float64 weight
    from ``torch.from_numpy`` of a numpy array meeting float32 logits)."""
    found = class_weights_at_loss(failure)
    if found is None:
        return None
    weight, logits = found
    return is_float(weight) and is_float(logits) and dtype(weight) != dtype(logits)


def weights_length_differs(failure: Failure) -> bool | None:
    """The loss's class-weight vector does not have one entry per class of the logits."""
    found = class_weights_at_loss(failure)
    if found is None:
        return None
    weight, logits = found
    dims, classes = shape(weight), _class_dim(logits)
    if not dims or classes is None or len(dims) != 1:
        return None
    return dims[0] != classes and not (dims[0] == 1 and classes == 1)


def _weights_advice(probe: ProbeReport) -> str:
    failure = failure_of(probe)
    found = class_weights_at_loss(failure) if failure is not None else None
    if found is None:
        return ""
    weight, logits = found
    dims, classes = shape(weight), _class_dim(logits)
    if dims and classes is not None and dims[0] != classes:
        return (f"the class-weight tensor has {dims[0]} entries and the logits {classes} "
                f"classes: give one weight per class, in class-id order (len == "
                f"num_labels == {classes}), e.g. recomputed from the training labels with "
                "sklearn's compute_class_weight(classes=np.arange(num_labels), ...)")
    return (f"the class weights are {dtype(weight)} and the logits {dtype(logits)}: "
            f"build the weights in the logits' dtype (torch.tensor(w, "
            f"dtype=torch.{dtype(logits)}), or .to(logits.dtype))")


#: Parameters that take a number, as the libraries name them where they check it (torch's
#: optimizers and ``BatchSampler``, ``TrainingArguments``' fields, common script names).
NUMERIC_PARAMS = frozenset({
    "lr", "learning_rate", "weight_decay", "eps", "momentum", "betas", "alpha", "beta1",
    "beta2", "dampening", "batch_size", "per_device_train_batch_size",
    "per_device_eval_batch_size", "num_train_epochs", "epochs", "num_epochs", "max_steps",
    "warmup_steps", "warmup_ratio", "gradient_accumulation_steps", "num_workers", "seed",
    "max_length", "max_grad_norm", "logging_steps", "eval_steps", "save_steps",
    "label_smoothing", "label_smoothing_factor", "dropout", "num_labels", "step_size",
    "gamma", "T_max", "num_warmup_steps", "num_training_steps",
})
#: Messages of a number check given a string (torch 2.13, Python 3.11).
_STRING_IN_CHECK = re.compile(r"'str'|\bstr\b|should be a positive integer value|"
                              r"must be real number|could not convert|invalid literal")


def numeric_strings(failure: Failure) -> list[tuple[str, str]]:
    """``(parameter, value)`` for each string spelling a number that the innermost library
    frames (the boundary that checks the number and its two callers) hold under the name
    of a numeric parameter (:data:`NUMERIC_PARAMS`)."""
    found: list[tuple[str, str]] = []
    for frame in library_frames(failure, 3):
        for name, value in frame.values.items():
            if name in NUMERIC_PARAMS and kind(value) == "str" \
                    and number_in(str(value.get("value", ""))) is not None \
                    and (name, str(value["value"])) not in found:
                found.append((name, str(value["value"])))
    return found


def mistyped_settings(failure: Failure) -> dict[str, dict[str, str]]:
    """The fields of a settings dataclass in the failing frames (``TrainingArguments``)
    declared a number that hold a string: ``{field: {"value", "expected"}}``."""
    out: dict[str, dict[str, str]] = {}
    for frame in failure.frame_facts():
        for value in frame.values.values():
            for name, entry in (value.get("mistyped") or {}).items():
                out.setdefault(name, dict(entry))
    return out


def string_for_number(failure: Failure) -> bool | None:
    """A string that spells a number reached a parameter that checks a number: the
    boundary's own local holds it (``lr='5e-5'`` in ``AdamW.__init__``,
    ``batch_size='16'`` in ``BatchSampler``), and the error is that check's (a comparison
    or a conversion involving ``str``)."""
    if not failure.has_facts:
        return None
    found = numeric_strings(failure)
    if not found:
        return False
    text = f"{failure.exc.short_type}: {failure.exc.message}"
    return bool(_STRING_IN_CHECK.search(text)) or any(v in failure.exc.message
                                                      for _, v in found)


def _string_advice(probe: ProbeReport) -> str:
    failure = failure_of(probe)
    if failure is None:
        return ""
    found = numeric_strings(failure)
    settings = mistyped_settings(failure)
    named = ", ".join(f"{n}={v!r}" for n, v in found) or \
        ", ".join(f"{n}={e['value']!r}" for n, e in settings.items())
    if not named:
        return ""
    return (f"{named} is a string where a number is needed: convert it where it is read "
            "(type=float / type=int on the argparse argument, float(...) / int(...) around "
            "the config value or os.environ.get(...)); PyYAML reads 5e-5 as a string (YAML "
            "1.1 floats need a dot: 5.0e-5)")


def output_object_at_loss(failure: Failure) -> bool | None:
    """The loss was given a transformers ``ModelOutput`` (it holds ``logits``) where it
    needs the logits tensor."""
    frames = list(failure.at("loss"))
    if not frames:
        return None
    return any(is_model_output(frame.values.get("input")) and "logits" in
               (frame.values["input"].get("keys") or ()) for frame in frames)


def extra_batch_dimension(failure: Failure) -> bool | None:
    """The model's forward got ``input_ids`` of shape (batch, 1, length): each item of the
    dataset already had a batch dimension (a tokenizer called with
    ``return_tensors="pt"`` on one example) and the loader stacked them."""
    ids = failure.value("input_ids", site="model-forward")
    if ids is None:
        ids = next((v.get("values", {}).get("input_ids") for f in failure.user_frames()
                    for v in f.values.values() if kind(v) == "mapping"
                    and "input_ids" in (v.get("keys") or ())), None)
    dims = shape(ids)
    if dims is None:
        return None
    return len(dims) == 3 and dims[1] == 1


def _graph_missing(failure: Failure) -> bool | None:
    """``backward`` on a loss without a graph while the model's weights require grad: the
    forward ran with gradients off (``torch.no_grad``, ``inference_mode``)."""
    loss = _backwarded(failure)
    if loss is None:
        return None
    forward = _last_forward(failure)
    if forward:  # the child saw the model's last forward: its grad mode decides
        return not forward.get("grad", True) and not loss.get("requires_grad", False)
    models = [v for f in failure.frame_facts() for v in f.values.values()
              if kind(v) == "model" and v.get("trainable")]
    if not models:
        return None
    return not loss.get("requires_grad", False)


def _backwarded(failure: Failure) -> Value | None:
    """The tensor ``backward()`` got (torch's frame), else the user's local ``loss``
    (``losses``, ``total_loss``)."""
    return backward_tensor(failure) or next(
        (v for f in failure.user_frames() for n, v in f.values.items()
         if kind(v) == "tensor" and n in ("loss", "losses", "total_loss")), None)


def _last_forward(failure: Failure) -> Mapping[str, bool]:
    """The child's record of the last forward of a model from the user's code before the
    failure (``grad``, ``graph``, ``training``; empty when none was seen)."""
    return next((e.forward for e in (failure.exc, *failure.exc.chain) if e.forward), {})


def _forward_recorded_graph(failure: Failure) -> bool:
    """The last forward of a model from the user's code before the failure ran with
    gradients on and gave an output that requires grad."""
    forward = _last_forward(failure)
    return bool(forward.get("grad")) and bool(forward.get("graph"))


def _loss_off_graph(failure: Failure) -> bool | None:
    """``backward`` on a loss without a graph although the model's last forward recorded
    one (gradients on, an output requiring grad): the loss was rebuilt from the outputs'
    values (``torch.tensor`` of a list of losses, ``.item()``, a NumPy round trip, a
    ``.detach()``), so no gradient can reach the model."""
    tensor = _backwarded(failure)
    if tensor is None or not _forward_recorded_graph(failure):
        return None
    return not tensor.get("requires_grad", False)


VALUES: tuple[Category, ...] = (
    Category(
        id="class-weights-dtype",
        title="class weights of another dtype than the logits reach the loss",
        types=("RuntimeError",),
        raised_in=("loss",),
        check=weights_dtype_differs,
        needs_facts=True,
        advice=_weights_advice,
        hint="build the class-weight tensor in the logits' dtype (torch.tensor(w, "
             "dtype=torch.float32), or .float() on torch.from_numpy of a float64 array)",
    ),
    Category(
        id="class-weights-length",
        title="a class-weight vector without one entry per class",
        types=("RuntimeError", "ValueError"),
        raised_in=("loss",),
        check=weights_length_differs,
        needs_facts=True,
        advice=_weights_advice,
        no_recipe="which weight belongs to which class is the user's to say: autofix does "
                  "not drop or invent class weights",
        hint="give one class weight per class, in class-id order (len == num_labels)",
    ),
    Category(
        id="config-value-wrong-type",
        title="a string where a number is needed (a config value, an argument, an "
              "environment variable read as text)",
        types=("TypeError", "ValueError"),
        check=string_for_number,
        needs_facts=True,
        advice=_string_advice,
        hint="convert the value where it is read: type=float / type=int on the argparse "
             "argument, float(...) / int(...) around the config value or the environment "
             "variable",
    ),
    Category(
        id="model-output-not-tensor",
        title="the model's output object given to the loss instead of its logits",
        types=("TypeError", "AttributeError"),
        raised_in=("loss",),
        check=output_object_at_loss,
        needs_facts=True,
        hint="Hugging Face models return a ModelOutput: give the loss outputs.logits",
    ),
    Category(
        id="extra-batch-dimension",
        title="dataset items that already have a batch dimension (input_ids of shape "
              "(batch, 1, length))",
        check=extra_batch_dimension,
        needs_facts=True,
        raised_in=("model-forward", "embedding"),
        hint="a tokenizer called with return_tensors=\"pt\" on one example returns (1, L) "
             "tensors: squeeze(0) each of them in __getitem__ (or drop return_tensors and "
             "pad in a collator)",
    ),
    Category(
        id="no-grad-training",
        title="the training loss is computed with gradients off (torch.no_grad around "
              "the training step)",
        patterns=(r"element 0 of tensors does not require grad and does not have a "
                  r"grad_fn",),
        check=_graph_missing,
        needs_facts=True,
        hint="the forward of a training step must record the graph: take torch.no_grad() "
             "(or inference_mode) off the training code, or use torch.set_grad_enabled("
             "training) in a function shared with evaluation",
    ),
    Category(
        id="loss-off-graph",
        title="the loss is rebuilt from the model outputs' values (torch.tensor of a list "
              "of losses, .item(), NumPy, .detach()), cut off from the graph",
        patterns=(r"element 0 of tensors does not require grad and does not have a "
                  r"grad_fn",),
        check=_loss_off_graph,
        needs_facts=True,
        hint="keep the loss a tensor of the graph from the model's output to backward(): "
             "torch.stack(losses).mean() (or sum(losses) / len(losses)) instead of "
             "torch.tensor(losses).mean(); no .item(), .tolist(), .numpy() or .detach() on "
             "the way",
    ),
)
