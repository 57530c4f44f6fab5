"""Splits whose labels were mapped to ids in different ways (``label-encoding-mismatch``).

Class ids mean something only through the one mapping that made them: a test split
encoded by its own mapping gives another id to the same label whenever its label set or
its order differs (a scikit-learn ``LabelEncoder`` fitted again on the test labels, one
missing class shifting every id after it; ``pd.factorize`` per split, ids in order of
first appearance; ``class_encode_column`` on separately loaded splits whose label sets
differ; ``{label: i for i, label in enumerate(set(labels))}`` built per split, in set
order). The model is then scored against labels it was never trained on; nothing raises.

The mappings a run builds are read from the real objects:

* each ``LabelEncoder.fit``/``fit_transform`` called from the user's code: its
  ``classes_`` after the fit, one mapping per fit (a refit of the same encoder is a new
  mapping: the ids it gave before are stale);
* each ``pandas.factorize`` (or ``Series.factorize``) from the user's code: its uniques,
  in order;
* each ``Dataset.class_encode_column`` and ``cast_column(..., ClassLabel(...))`` from the
  user's code: the ``ClassLabel``'s names;
* each ``Series.map`` from the user's code given a label map (a dict of the kind below);
* at the first optimizer step of a hand loop and at ``Trainer.train()``: the label maps
  bound in the user's frames (locals, then the module's globals) and up to two attribute
  levels into the objects of the user's own classes there (a ``Dataset`` subclass's
  ``self.label2id``, an engine's ``self.val_set.label2id``): dicts of 2 to
  :data:`MAX_LABELS` string keys whose values are exactly ``0..n-1``.

Two mappings are compared when one's labels are a subset of the other's (two maps of
unrelated columns are not: their key sets are not nested) and they share at least two
labels; a label with two ids is the fault, sent once per pair at the later mapping's place
with both mappings, their sources and names for the recipe (``one-label-encoder``).
"""

from __future__ import annotations

import types
from typing import Any

from .events import State
from .invariants import caller_is_user, is_user_file, report, user_frame, where

KIND = "label-encoding-mismatch"
#: A label map holds at most this many labels (a vocabulary is not a label map).
MAX_LABELS = 1000


class Seen:
    """The mappings recorded in this run (reset per process)."""

    #: {"source", "name", "mapping" {label: id}, "place", "id" (the object's id)}
    maps: list[dict[str, Any]] = []
    pairs: set[tuple[int, int]] = set()
    scanned_at: set[str] = set()


def _mapping(labels: Any) -> dict[str, int]:
    return {str(label): i for i, label in enumerate(list(labels))}


def is_label_map(value: Any) -> bool:
    """A dict of 2 to :data:`MAX_LABELS` string keys whose values are exactly 0..n-1."""
    if not isinstance(value, dict) or not 2 <= len(value) <= MAX_LABELS:
        return False
    if not all(isinstance(k, str) for k in value):
        return False
    values = list(value.values())
    return all(isinstance(v, int) and not isinstance(v, bool) for v in values) \
        and sorted(values) == list(range(len(values)))


def _conflict(a: dict[str, int], b: dict[str, int]) -> list[str]:
    """The labels given two ids by ``a`` and ``b`` (only for nested label sets sharing at
    least two labels)."""
    keys_a, keys_b = set(a), set(b)
    common = keys_a & keys_b
    if len(common) < 2 or not (keys_a <= keys_b or keys_b <= keys_a):
        return []
    return sorted(k for k in common if a[k] != b[k])


def record(source: str, name: str, mapping: dict[str, int], place: dict[str, Any],
           key: int) -> None:
    """Add one mapping (made by ``source``, bound to ``name``, seen at ``place``; ``key``
    identifies the object and fit) and compare it with every earlier one."""
    if len(mapping) < 2:
        return
    for old in Seen.maps:
        if old["id"] == key or old["mapping"] == mapping:
            continue
        pair = (min(old["id"], key), max(old["id"], key))
        if pair in Seen.pairs:
            continue
        wrong = _conflict(old["mapping"], mapping)
        if not wrong:
            continue
        Seen.pairs.add(pair)
        first = {k: old["mapping"][k] for k in wrong[:4]}
        second = {k: mapping[k] for k in wrong[:4]}
        report(KIND, f"two mappings of labels to ids disagree: {_said(old)} gives {first}, "
                     f"{_said({'source': source, 'name': name, 'place': place})} gives "
                     f"{second} ({len(wrong)} label{'s' if len(wrong) > 1 else ''} with two "
                     "ids): a split encoded with the second is scored against ids the model "
                     "never learned; fit one encoder on the training labels and apply it to "
                     "every split",
               place, {"first": _public(old), "second": _public(
                   {"source": source, "name": name, "mapping": mapping, "place": place}),
                       "labels": wrong[:20]})
    Seen.maps.append({"source": source, "name": name, "mapping": mapping, "place": place,
                      "id": key})


def _said(entry: dict[str, Any]) -> str:
    place = entry["place"]
    name = f" `{entry['name']}`" if entry.get("name") else ""
    file = str(place.get("file", "")).rsplit("/", 1)[-1]
    if entry["source"] == "label map":  # found bound in a frame: where it lives, not a line
        return f"label map{name} of {place.get('function')}() in {file}"
    return f"{entry['source']}{name} at {file}:{place.get('line')}"


def _public(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: entry[k] for k in ("source", "name", "mapping", "place")}


# --- the libraries' encoders ------------------------------------------------------------


def _target_name(place: dict[str, Any]) -> str:
    """The name a line assigns (``y_test = enc.fit_transform(...)`` -> ``y_test``)."""
    text = str(place.get("text", ""))
    head, sep, _ = text.partition("=")
    return head.strip() if sep and head.strip().isidentifier() else ""


def patch_label_encoder(module: types.ModuleType) -> None:
    """``sklearn.preprocessing._label``: ``LabelEncoder.fit`` / ``fit_transform`` from the
    user's code record ``classes_`` after the fit."""
    encoder_cls = getattr(module, "LabelEncoder", None)
    if encoder_cls is None:
        return
    for method in ("fit", "fit_transform"):
        original = getattr(encoder_cls, method, None)
        if original is None or getattr(original, "_autofix_maps", False):
            continue
        setattr(encoder_cls, method, _fitted(method, original))


def _fitted(method: str, original: Any) -> Any:
    def fit(self: Any, *args: Any, **kwargs: Any) -> Any:
        frame = caller_is_user()
        out = original(self, *args, **kwargs)
        if frame is not None:
            try:
                place = where(frame)
                self._autofix_fits = getattr(self, "_autofix_fits", 0) + 1
                record("LabelEncoder." + method, _receiver(place, method),
                       _mapping(self.classes_), place, hash((id(self), self._autofix_fits)))
            except Exception:  # noqa: BLE001 - the probe must never break the script
                pass
        return out

    fit._autofix_maps = True  # type: ignore[attr-defined]
    fit.__wrapped__ = original  # type: ignore[attr-defined]
    return fit


def _receiver(place: dict[str, Any], method: str) -> str:
    """``enc`` in a line that calls ``enc.<method>(``."""
    text = str(place.get("text", ""))
    index = text.find(f".{method}(")
    if index < 0:
        return ""
    head = text[:index]
    start = len(head)
    while start > 0 and (head[start - 1].isalnum() or head[start - 1] in "_."):
        start -= 1
    return head[start:]


def patch_factorize(module: types.ModuleType) -> None:
    """``pandas.core.algorithms``: ``factorize`` called from the user's code, directly or
    through ``Series.factorize``, records its uniques in order."""
    original = getattr(module, "factorize", None)
    if original is None or getattr(original, "_autofix_maps", False):
        return

    def factorize(values: Any, *args: Any, **kwargs: Any) -> Any:
        frame = caller_is_user() or _through_method()
        out = original(values, *args, **kwargs)
        if frame is not None:
            try:
                place = where(frame)
                record("pandas.factorize", _target_name(place), _mapping(out[1]), place,
                       id(out[0]))
            except Exception:  # noqa: BLE001 - the probe must never break the script
                pass
        return out

    factorize._autofix_maps = True  # type: ignore[attr-defined]
    factorize.__wrapped__ = original  # type: ignore[attr-defined]
    module.factorize = factorize  # type: ignore[attr-defined]


def _through_method() -> Any:
    """The user's frame when ``factorize`` was called by pandas' ``Series.factorize``."""
    import sys

    frame = sys._getframe(2)
    if frame.f_code.co_name == "factorize" and frame.f_back is not None \
            and is_user_file(frame.f_back.f_code.co_filename):
        return frame.f_back
    return None


def patch_series(module: types.ModuleType) -> None:
    """``pandas.core.series``: ``Series.map(label_map)`` from the user's code records the
    map (a label map passed to a helper and used there only is seen here)."""
    series_cls = getattr(module, "Series", None)
    original = getattr(series_cls, "map", None)
    if original is None or getattr(original, "_autofix_maps", False):
        return

    def map(self: Any, arg: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A001
        frame = caller_is_user()
        if frame is not None and is_label_map(arg):
            try:
                place = where(frame)
                record("Series.map", _argument_name(frame, arg), dict(arg), place, id(arg))
            except Exception:  # noqa: BLE001 - the probe must never break the script
                pass
        return original(self, arg, *args, **kwargs)

    map._autofix_maps = True  # type: ignore[attr-defined]
    map.__wrapped__ = original  # type: ignore[attr-defined]
    series_cls.map = map  # type: ignore[union-attr]


def _argument_name(frame: Any, value: Any) -> str:
    """The name ``value`` is bound to in ``frame``'s locals, else ""."""
    return next((str(k) for k, v in list(frame.f_locals.items()) if v is value), "")


def patch_datasets(module: types.ModuleType) -> None:
    """``datasets.arrow_dataset``: ``Dataset.class_encode_column`` and a ``cast_column``
    to a ``ClassLabel`` from the user's code record the ``ClassLabel``'s names."""
    dataset_cls = getattr(module, "Dataset", None)
    for method in ("class_encode_column", "cast_column"):
        original = getattr(dataset_cls, method, None)
        if original is None or getattr(original, "_autofix_maps", False):
            continue
        setattr(dataset_cls, method, _encoded(method, original))


def _encoded(method: str, original: Any) -> Any:
    def encode(self: Any, column: Any, *args: Any, **kwargs: Any) -> Any:
        frame = caller_is_user()
        out = original(self, column, *args, **kwargs)
        if frame is not None:
            try:
                feature = out.features[column]
                if type(feature).__name__ == "ClassLabel":
                    place = where(frame)
                    record(f"Dataset.{method}", _target_name(place), _mapping(feature.names),
                           place, id(out))
            except Exception:  # noqa: BLE001 - the probe must never break the script
                pass
        return out

    encode._autofix_maps = True  # type: ignore[attr-defined]
    encode.__wrapped__ = original  # type: ignore[attr-defined]
    return encode


# --- label maps bound in the user's frames ----------------------------------------------


def _user_object(value: Any) -> bool:
    """An instance of a class defined in the user's files (its attributes are scanned)."""
    module = getattr(type(value), "__module__", "")
    import sys

    file = getattr(sys.modules.get(module), "__file__", None) or ""
    return bool(file) and is_user_file(file) and hasattr(value, "__dict__")


def scan(when: str) -> None:
    """Record the label maps bound in the user's frames and their modules' globals, and
    two attribute levels into the user's own objects there (module docstring); once per
    ``when``."""
    if when in Seen.scanned_at:
        return
    Seen.scanned_at.add(when)
    frame = user_frame(2)
    seen: set[int] = set()
    while frame is not None:
        if is_user_file(frame.f_code.co_filename):
            place = where(frame)
            scopes = [frame.f_locals]
            if frame.f_globals is not frame.f_locals:
                scopes.append(frame.f_globals)
            for scope in scopes:
                for name, value in list(scope.items()):
                    _scan_value(name, value, place, seen)
        frame = frame.f_back


def _scan_value(name: str, value: Any, place: dict[str, Any], seen: set[int],
                depth: int = 0) -> None:
    """Record ``value`` (bound to ``name``) when it is a label map; look into the
    attributes of the user's own objects, two levels deep (``self.val_set.label2id``)."""
    if name.startswith("__") or id(value) in seen:
        return
    seen.add(id(value))
    if is_label_map(value):
        record("label map", name, dict(value), place, id(value))
    elif depth < 2 and _user_object(value):
        for attr, inner in list(vars(value).items()):
            _scan_value(f"{name}.{attr}", inner, place, seen, depth + 1)


def _scan_quietly(when: str) -> None:
    try:
        scan(when)
    except Exception:  # noqa: BLE001 - the probe must never break the script
        pass


def patch_optimizer(module: types.ModuleType) -> None:
    """``torch.optim.optimizer``: the label maps are scanned at a hand loop's first
    optimizer step (its data is prepared by then)."""
    def before_step(optimizer: Any, args: Any, kwargs: Any) -> None:
        if not State.in_trainer and "step" not in Seen.scanned_at:
            _scan_quietly("step")

    module.register_optimizer_step_pre_hook(before_step)


def patch_trainer(module: types.ModuleType) -> None:
    """``transformers.trainer``: the label maps are scanned at ``Trainer.train()``."""
    trainer_cls = getattr(module, "Trainer", None)
    original = getattr(trainer_cls, "train", None)
    if original is None or getattr(original, "_autofix_maps", False):
        return

    def train(self: Any, *args: Any, **kwargs: Any) -> Any:
        _scan_quietly("train")
        return original(self, *args, **kwargs)

    train._autofix_maps = True  # type: ignore[attr-defined]
    trainer_cls.train = train  # type: ignore[union-attr]
