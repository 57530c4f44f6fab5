"""A layer's sizes and its place in the model, for the facts at the failure.

When a torch layer raises on its input (``nn.Linear`` given 384 features where it was
built for 768: "mat1 and mat2 shapes cannot be multiplied (16x384 and 768x3)"), the fix is
made where the script builds that layer, with the size the input really has. The facts
needed are those of the real objects: the layer's own sizes (:func:`layer_sizes`:
``in_features``, ``out_features``, ``num_embeddings``, channels...), which attribute of
which model it is (:func:`placement`: its qualified name in the outermost model the
failing frames hold, the class that holds it as an attribute, the local names the model
has in the user's frames) and the pretrained encoders of that model, with their
``config.hidden_size`` and the names the user's frames give them (a head sized for
BERT-base on a 384-wide MiniLM encoder is sized from ``encoder.config.hidden_size``).

Standard library only (it runs inside the user's interpreter); torch is recognised by
duck typing. Every reader is bounded and never raises.
"""

from __future__ import annotations

from typing import Any

#: The size attributes of torch's layers (``nn.Linear``, ``nn.Embedding``, ``nn.ConvNd``,
#: ``nn.BatchNormNd``, ``nn.LayerNorm``, ``nn.RNN``/``LSTM``/``GRU``), read as ints or
#: tuples of ints.
SIZE_ATTRS = ("in_features", "out_features", "num_embeddings", "embedding_dim",
              "in_channels", "out_channels", "num_features", "normalized_shape",
              "input_size", "hidden_size")
#: Modules walked in one model when its layer is looked for (a 70B Llama has ~1,300).
MAX_MODULES = 20_000
#: Pretrained encoders and local names reported per model.
MAX_ENCODERS = 8
MAX_NAMES = 6


def is_module(value: Any) -> bool:
    """A torch ``nn.Module`` (duck-typed: ``named_modules``, ``parameters``, ``forward``)."""
    return hasattr(value, "named_modules") and hasattr(value, "parameters") \
        and hasattr(value, "forward") and not isinstance(value, type)


def layer_sizes(module: Any) -> dict[str, Any]:
    """The size attributes of a layer (:data:`SIZE_ATTRS`) that it has as an int or a
    tuple of ints (``{"in_features": 768, "out_features": 3}``); ``{}`` for a module that
    is not one of torch's sized layers (a whole model). The attributes are read from the
    instance's own ``__dict__``, so a model's ``config.hidden_size`` is not mistaken for
    a layer's."""
    try:
        own = vars(module)
    except TypeError:
        return {}
    out: dict[str, Any] = {}
    for name in SIZE_ATTRS:
        value = own.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            out[name] = value
        elif isinstance(value, (tuple, list)) and value and \
                all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            out[name] = [int(v) for v in value][:8]
    return out


def _hidden_size(module: Any) -> int | None:
    """``config.hidden_size`` of a transformers ``PreTrainedModel`` (duck-typed: a
    ``config`` with an int ``hidden_size`` and a ``base_model_prefix``), else ``None``."""
    config = getattr(module, "config", None)
    size = getattr(config, "hidden_size", None)
    if isinstance(size, int) and not isinstance(size, bool) \
            and hasattr(module, "base_model_prefix"):
        return size
    return None


def _names_of(target: Any, scopes: list[dict[str, Any]]) -> list[str]:
    """The local names bound to ``target`` itself in ``scopes`` (innermost first)."""
    names: list[str] = []
    for scope in scopes:
        for name, value in list(scope.items())[:400]:
            if value is target and not name.startswith("__") and name != "self" \
                    and name not in names:
                names.append(name)
    return names[:MAX_NAMES]


def placement(layer: Any, scopes: list[dict[str, Any]], user_scopes: list[dict[str, Any]]
              ) -> dict[str, Any]:
    """Where ``layer`` sits: the outermost model among the locals of ``scopes`` (frames'
    locals, outermost first) whose ``named_modules`` hold it. Returns ``{"path"`` (its
    qualified name in that model, ``"head"``, ``"classifier.2"``), ``"root"`` (the model's
    class, qualified), ``"root_names"`` (the names the model has in ``user_scopes``),
    ``"owner"`` (the class of the module holding it as an attribute), ``"encoders"``
    (each pretrained model inside the root, the root included, outermost only:
    ``{"path", "type", "hidden_size", "names"}``)}``; ``{}`` when no model holds it.
    Never raises."""
    try:
        for scope in scopes:
            found = [_place_in(layer, value, user_scopes) for value in list(scope.values())[:400]
                     if value is not layer and is_module(value)]
            found = [f for f in found if f]
            if found:  # the largest model of the outermost frame holding one
                best = max(found, key=lambda f: f["modules"])
                del best["modules"]
                return best
    except Exception:  # noqa: BLE001 - a fact we cannot read is left out
        return {}
    return {}


def _place_in(layer: Any, root: Any, user_scopes: list[dict[str, Any]]) -> dict[str, Any]:
    walked: dict[str, Any] = {}
    path = None
    for i, (name, module) in enumerate(root.named_modules()):
        if i >= MAX_MODULES:
            break
        walked[name] = module
        if module is layer:
            path = name
    if path is None:
        return {}
    parent = walked.get(path.rsplit(".", 1)[0] if "." in path else "", root)
    encoders: list[dict[str, Any]] = []
    taken: list[str] = []
    for name, module in walked.items():
        size = _hidden_size(module)
        if size is None or any(name == t or name.startswith(t + ".") if t else True
                               for t in taken):
            continue
        taken.append(name)
        encoders.append({"path": name, "type": _qualname(module), "hidden_size": size,
                         "names": _names_of(module, user_scopes)})
        if len(encoders) >= MAX_ENCODERS:
            break
    return {"path": path, "root": _qualname(root), "root_names": _names_of(root, user_scopes),
            "owner": _qualname(parent), "encoders": encoders, "modules": len(walked)}


def _qualname(value: Any) -> str:
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"
