"""Override and pairing drift, checked against the installed libraries without a run.

Run by ``api_check.py`` in the user's training interpreter: standard library only, the
libraries the script uses imported there. Two checks:

* **Overrides.** For a class of the user's that subclasses a library class (``Trainer``,
  ``SFTTrainer``, ``TrainerCallback``, a collator, ``PreTrainedModel``, torch's
  ``Dataset``, a Keras callback...), every method it overrides is compared with how the
  installed library calls that method. The calls are read from the library's own source:
  every ``<x>.name(...)`` call in the modules of the base's library classes (kept only
  when it binds to the base method's own signature, so a call on another object with the
  same method name is not counted) and the dispatchers that call every hook of a class
  (``getattr(callback, event)(args, state, control, model=..., **kwargs)`` in transformers'
  ``CallbackHandler``), for a base method that takes ``**kwargs``. Without any call in
  those modules, the base method's required parameters stand for the call. A call the
  override cannot bind gives the ``TypeError`` the run would raise
  (``WeightedTrainer.compute_loss() got an unexpected keyword argument
  'num_items_in_batch'``), with what to add: the base's parameter with its default
  (``num_items_in_batch=None``), or ``**kwargs`` for keywords the base itself only takes
  through ``**kwargs``. A method that overrides nothing (the library defines no method of
  that name and the user's code never calls it) is reported as a stale override, with the
  closest name the base has.
* **Pairing.** A trainer whose own code reads fields of its configuration class
  (``Seq2SeqTrainer`` reads ``self.args.generation_config``) given the plain
  ``TrainingArguments`` raises ``AttributeError: 'TrainingArguments' object has no attribute
  'generation_config'``; the paired class is the one the trainer's ``args`` annotation
  names, else the library's class named like the trainer (``Seq2SeqTrainer`` ->
  ``Seq2SeqTrainingArguments``, ``DPOTrainer`` -> ``DPOConfig``). A trainer that converts
  plain arguments itself (``SFTConfig(**args.to_dict())`` in ``SFTTrainer.__init__``) is no
  finding. :func:`keyword_move` says where a keyword the trainer rejects belongs
  (``SFTTrainer(max_seq_length=)`` -> ``SFTConfig(max_length=)``).

Anything that cannot be read for certain (a class without source, a module that does not
import) gives no finding.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import inspect
import re
import sys
import textwrap
import typing
from typing import Any

#: Keys of a parameter's ``kind`` in the request (LibCST's view of the user's ``def``).
_KINDS = {"posonly": inspect.Parameter.POSITIONAL_ONLY,
          "pos": inspect.Parameter.POSITIONAL_OR_KEYWORD,
          "varpos": inspect.Parameter.VAR_POSITIONAL,
          "kwonly": inspect.Parameter.KEYWORD_ONLY,
          "varkw": inspect.Parameter.VAR_KEYWORD}
#: Dunder methods the library calls on the user's objects (others are the user's own
#: construction or Python's protocol, which the library does not call with its own shape).
_CALLED_DUNDERS = ("__call__", "__getitem__", "__len__", "__iter__")
#: How close a base method's name must be to a stale override's to be named as its new
#: name (``difflib`` ratio).
_CLOSE = 0.8

_TREES: dict[str, tuple[ast.Module, dict[ast.AST, str]] | None] = {}


def _module_tree(name: str) -> tuple[ast.Module, dict[ast.AST, str]] | None:
    """The parsed source of module ``name`` and, per call node, its enclosing function."""
    if name not in _TREES:
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        parsed: tuple[ast.Module, dict[ast.AST, str]] | None = None
        if path and path.endswith(".py"):
            try:
                with open(path, encoding="utf-8") as handle:
                    tree = ast.parse(handle.read())
            except (OSError, SyntaxError, ValueError):
                tree = None
            if tree is not None:
                owner: dict[ast.AST, str] = {}
                for func in ast.walk(tree):
                    if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        for node in ast.walk(func):
                            if isinstance(node, ast.Call):
                                owner[node] = func.name  # innermost wins (walked later)
                parsed = (tree, owner)
        _TREES[name] = parsed
    return _TREES[name]


def _library_file(module: str) -> str:
    """``transformers/trainer.py`` for ``transformers.trainer`` (no machine paths)."""
    path = getattr(sys.modules.get(module), "__file__", "") or ""
    tail = "__init__.py" if path.endswith("__init__.py") else ""
    return module.replace(".", "/") + ("/" + tail if tail else ".py")


@dataclasses.dataclass(frozen=True)
class CallShape:
    """How the library calls a method: positional count (``None``: a ``*args`` splat),
    the keywords it names, and where (``transformers/trainer.py:2090 in training_step``)."""

    positional: int | None
    keywords: tuple[str, ...]
    where: str


def _literal(value: Any) -> str | None:
    """``repr(value)`` for a default that reads back as the same literal, else ``None``."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    return None


def _library_classes(base: type) -> list[type]:
    """The classes of ``base``'s MRO that come from an installed library (not builtins)."""
    return [c for c in base.__mro__ if c.__module__ not in ("builtins", "typing", "abc")
            and not c.__module__.startswith("_")]


def _defining_class(bases: list[type], name: str) -> tuple[type, Any] | None:
    """The first library class of ``bases``' MROs defining ``name``, with the attribute."""
    for base in bases:
        for cls in _library_classes(base):
            if name in cls.__dict__:
                return cls, cls.__dict__[name]
    return None


def _signature(func: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(func, follow_wrapped=False)
    except (TypeError, ValueError):
        return None


def _binds(signature: inspect.Signature, positional: int | None, keywords: tuple[str, ...]
           ) -> bool:
    """True when a call of that shape (with ``self`` first) binds to ``signature``."""
    try:
        if positional is None:
            signature.bind_partial(None, **dict.fromkeys(keywords))
        else:
            signature.bind(None, *([None] * positional), **dict.fromkeys(keywords))
    except TypeError:
        return False
    return True


def call_shapes(bases: list[type], name: str, base_sig: inspect.Signature) -> list[CallShape]:
    """The calls of method ``name`` in the source of ``bases``' library modules that bind
    to the base method's ``base_sig``, in source order (see the module docstring)."""
    modules: list[str] = []
    for base in bases:
        for cls in _library_classes(base):
            if cls.__module__ not in modules:
                modules.append(cls.__module__)
    takes_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD
                       for p in base_sig.parameters.values())
    shapes: list[CallShape] = []
    for module in modules:
        parsed = _module_tree(module)
        if parsed is None:
            continue
        tree, owner = parsed
        calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call)),
                       key=lambda n: (n.lineno, n.col_offset))
        for call in calls:
            func = call.func
            direct = isinstance(func, ast.Attribute) and func.attr == name
            dispatch = (takes_kwargs and isinstance(func, ast.Call)
                        and isinstance(func.func, ast.Name) and func.func.id == "getattr"
                        and len(func.args) == 2 and not isinstance(func.args[1], ast.Constant))
            if not (direct or dispatch):
                continue
            starred = any(isinstance(a, ast.Starred) for a in call.args)
            keywords = tuple(k.arg for k in call.keywords if k.arg is not None)
            positional = None if starred else len(call.args)
            if not _binds(base_sig, positional, keywords):
                continue  # another object's method of the same name
            where = f"{_library_file(module)}:{call.lineno}"
            if call in owner:
                where += f" in {owner[call]}"
            shapes.append(CallShape(positional, keywords, where))
    return shapes


def _user_signature(params: list[dict[str, Any]]) -> inspect.Signature | None:
    try:
        return inspect.Signature([
            inspect.Parameter(p["name"], _KINDS[p["kind"]],
                              default=0 if p.get("default") else inspect.Parameter.empty)
            for p in params])
    except (KeyError, ValueError, TypeError):
        return None


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def binding_error(qualname: str, params: list[dict[str, Any]], shape: CallShape
                  ) -> tuple[str, str] | None:
    """The error Python raises when ``shape`` calls a method with ``params`` (``self``
    first), as ``(kind, message)``; ``None`` when the call binds. ``kind`` is
    ``keyword`` (an unexpected keyword), ``positional`` (too many) or ``missing``."""
    sig = _user_signature(params)
    if sig is None:
        return None
    kinds = [p.kind for p in sig.parameters.values()]
    names = list(sig.parameters)
    positional_params = [n for n, k in zip(names, kinds, strict=True)
                         if k in (inspect.Parameter.POSITIONAL_ONLY,
                                  inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    varpos = inspect.Parameter.VAR_POSITIONAL in kinds
    varkw = inspect.Parameter.VAR_KEYWORD in kinds
    given = 1 + (shape.positional or 0)  # self included, as Python counts
    filled = set(positional_params[:given])
    for keyword in shape.keywords:
        param = sig.parameters.get(keyword)
        ok = param is not None and param.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                  inspect.Parameter.KEYWORD_ONLY)
        if not ok and not varkw:
            return "keyword", f"{qualname}() got an unexpected keyword argument '{keyword}'"
    if shape.positional is not None and given > len(positional_params) and not varpos:
        required = sum(1 for n in positional_params
                       if sig.parameters[n].default is inspect.Parameter.empty)
        most = len(positional_params)
        takes = _plural(most, "positional argument") if required == most else \
            f"from {required} to {most} positional arguments"
        were = "was" if given == 1 else "were"
        return "positional", f"{qualname}() takes {takes} but {given} {were} given"
    if shape.positional is None:
        return None
    for name in positional_params[given:]:
        if sig.parameters[name].default is inspect.Parameter.empty and name not in filled \
                and name not in shape.keywords:
            return "missing", f"{qualname}() missing 1 required positional argument: '{name}'"
    for name, param in sig.parameters.items():
        if param.kind is inspect.Parameter.KEYWORD_ONLY and param.default is \
                inspect.Parameter.empty and name not in shape.keywords:
            return "missing", f"{qualname}() missing 1 required keyword-only argument: '{name}'"
    return None


def _additions(params: list[dict[str, Any]], shapes: list[CallShape],
               base_sig: inspect.Signature) -> tuple[list[str], bool]:
    """What the override must take so every call binds: parameters as source
    (``num_items_in_batch=None``, with the base's default, ``None`` where the base has
    none: the library always passes it) and whether ``**kwargs`` is needed (a keyword the
    base itself takes only through ``**kwargs``)."""
    have = {p["name"] for p in params}
    varkw = any(p["kind"] == "varkw" for p in params)
    varpos = any(p["kind"] == "varpos" for p in params)
    capacity = sum(1 for p in params if p["kind"] in ("posonly", "pos"))
    base_params = list(base_sig.parameters.values())
    base_positional = [p for p in base_params
                       if p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                     inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    added: list[str] = []
    kwargs = False

    def param_text(param: inspect.Parameter) -> str:
        default = param.default
        text = _literal(default) if default is not inspect.Parameter.empty else "None"
        return f"{param.name}={text if text is not None else 'None'}"

    for shape in shapes:
        if shape.positional is not None and not varpos:
            for index in range(capacity, 1 + shape.positional):
                if index < len(base_positional):
                    param = base_positional[index]
                    if param.name not in have:
                        added.append(param_text(param))
                        have.add(param.name)
            capacity = max(capacity, 1 + shape.positional)
        for keyword in shape.keywords:
            if keyword in have or varkw:
                continue
            named = base_sig.parameters.get(keyword)
            if named is not None and named.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                    inspect.Parameter.KEYWORD_ONLY):
                added.append(param_text(named))
                have.add(keyword)
            else:
                kwargs = True
    return added, kwargs


def _mentions(bases: list[type], name: str) -> bool:
    """True when ``name`` occurs as a word in the source of ``bases``' library modules."""
    pattern = re.compile(rf"\b{re.escape(name)}\b")
    for base in bases:
        for cls in _library_classes(base):
            path = getattr(sys.modules.get(cls.__module__), "__file__", None)
            if not path:
                continue
            try:
                with open(path, encoding="utf-8") as handle:
                    if pattern.search(handle.read()):
                        return True
            except OSError:
                continue
    return False


def check_class(item: dict[str, Any], bases: list[type], referenced: set[str]
                ) -> list[dict[str, Any]]:
    """Findings for one user class (``item``: name, file, line, methods with their
    parameters) whose library bases are ``bases``; ``referenced`` holds every attribute
    name and string the user's code mentions."""
    findings: list[dict[str, Any]] = []
    cls_name = item["name"]
    library = bases[0].__module__.split(".", 1)[0]
    for method in item.get("methods", []):
        name = method["name"]
        if method.get("decorated") or (name.startswith("__") and name.endswith("__")
                                       and name not in _CALLED_DUNDERS):
            continue
        qualname = f"{cls_name}.{name}"
        found = _defining_class(bases, name)
        base_line = {"file": item.get("file", ""), "line": method.get("line", 0),
                     "library": library}
        if found is None:
            if name in referenced or name.startswith("__"):
                continue
            choices = sorted({n for b in bases for c in _library_classes(b)
                              for n, v in c.__dict__.items()
                              if callable(v) and not n.startswith("__")}
                             - {m["name"] for m in item.get("methods", [])})
            close = difflib.get_close_matches(name, choices, n=1, cutoff=_CLOSE)
            if not close and not _mentions(bases, name):
                continue
            base = f"{bases[0].__module__.split('.', 1)[0]}.{bases[0].__name__}"
            message = (f"{qualname} overrides nothing: the installed {base} has no method "
                       f"'{name}', so the library never calls it")
            if close:
                message += f"; its closest hook is '{close[0]}'"
            findings.append({**base_line, "type": "StaleOverride", "message": message,
                             "facts": {"class": cls_name, "method": name,
                                       "new_name": close[0] if close else ""}})
            continue
        owner, attr = found
        if isinstance(attr, (staticmethod, classmethod, property)):
            continue
        base_sig = _signature(attr)
        if base_sig is None:
            continue
        shapes = call_shapes(bases, name, base_sig)
        if not shapes:  # no call in the library's source: its required parameters stand in
            required = [p for p in list(base_sig.parameters.values())[1:]
                        if p.default is inspect.Parameter.empty
                        and p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                       inspect.Parameter.POSITIONAL_OR_KEYWORD)]
            shapes = [CallShape(len(required), (), f"the signature of {owner.__qualname__}")]
        params = method.get("params", [])
        for shape in shapes:
            error = binding_error(qualname, params, shape)
            if error is None:
                continue
            kind, message = error
            added, kwargs = _additions(params, shapes, base_sig)
            findings.append({**base_line, "type": "TypeError", "message": message,
                             "facts": {"class": cls_name, "method": name, "kind": kind,
                                       "add": ", ".join(added), "kwargs": "1" if kwargs else "",
                                       "caller": shape.where,
                                       "base": f"{owner.__module__}.{owner.__qualname__}"}})
            break
    return findings


# -- pairing ---------------------------------------------------------------------------


def _is_named(cls: Any, name: str, library: str) -> bool:
    return inspect.isclass(cls) and any(c.__name__ == name and c.__module__.startswith(library)
                                        for c in cls.__mro__)


def is_trainer(cls: Any) -> bool:
    """``cls`` is transformers' ``Trainer`` or derives from it."""
    return _is_named(cls, "Trainer", "transformers")


def is_training_args(cls: Any) -> bool:
    """``cls`` is transformers' ``TrainingArguments`` or derives from it."""
    return _is_named(cls, "TrainingArguments", "transformers")


def importable(cls: type) -> str:
    """The name to import ``cls`` by: its top-level package's when exported there."""
    top = cls.__module__.split(".", 1)[0]
    if getattr(sys.modules.get(top), cls.__name__, None) is cls:
        return f"{top}.{cls.__name__}"
    return f"{cls.__module__}.{cls.__name__}"


def _annotation_classes(trainer: type) -> list[type]:
    """The classes the trainer's ``__init__`` annotation of ``args`` names."""
    sig = _signature(vars(trainer).get("__init__") or getattr(trainer, "__init__", None))
    param = sig.parameters.get("args") if sig is not None else None
    if param is None or param.annotation is inspect.Parameter.empty:
        return []
    module = sys.modules.get(trainer.__module__)
    names = vars(module) if module is not None else {}
    pending: list[Any] = [param.annotation]
    found: list[type] = []
    while pending:
        ann = pending.pop()
        if isinstance(ann, typing.ForwardRef):
            ann = ann.__forward_arg__
        if isinstance(ann, str):
            pending += [names.get(part.strip()) for part in re.split(r"[|\[\],]", ann)
                        if part.strip()]
            continue
        if inspect.isclass(ann):
            found.append(ann)
        else:
            pending += list(typing.get_args(ann))
    return found


def paired_config(trainer: type) -> type | None:
    """The configuration class ``trainer`` is paired with (``None`` for ``Trainer`` itself,
    which takes plain ``TrainingArguments``): the most derived ``TrainingArguments``
    subclass its ``args`` annotation names, else the library's class named like it."""
    named = [c for c in _annotation_classes(trainer)
             if is_training_args(c) and c.__name__ != "TrainingArguments"]
    for each in named:
        if all(issubclass(each, other) for other in named):
            return each
    if not trainer.__name__.endswith("Trainer") or trainer.__name__ == "Trainer":
        return None
    prefix = trainer.__name__[: -len("Trainer")]
    for module_name in (trainer.__module__, trainer.__module__.split(".", 1)[0]):
        module = sys.modules.get(module_name)
        for suffix in ("TrainingArguments", "Config", "Arguments"):
            try:
                cand: Any = getattr(module, prefix + suffix, None)
            except Exception:  # noqa: BLE001 - a lazy attribute that fails to import
                cand = None
            if is_training_args(cand) and cand.__name__ != "TrainingArguments":
                found: type = cand
                return found
    return None


def _own_classes(trainer: type) -> list[type]:
    """``trainer``'s MRO above transformers' ``Trainer`` (the code pairing is about)."""
    own = []
    for cls in trainer.__mro__:
        if cls.__name__ == "Trainer" and cls.__module__.startswith("transformers"):
            break
        own.append(cls)
    return own


def _class_tree(cls: type) -> ast.Module | None:
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError, ValueError):
        return None


def _fields(cls: type) -> set[str]:
    names = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    return names | set(dir(cls))


def args_reads(trainer: type) -> list[str]:
    """The attributes the trainer's own code reads from its arguments (``self.args.x``,
    ``args.x``), those of ``__init__`` first, each in source order."""
    init: list[tuple[int, str]] = []
    rest: list[tuple[int, str]] = []
    for cls in _own_classes(trainer):
        tree = _class_tree(cls)
        if tree is None:
            continue
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            bucket = init if func.name == "__init__" else rest
            for node in ast.walk(func):
                if not isinstance(node, ast.Attribute) or not isinstance(node.ctx, ast.Load):
                    continue
                holder = node.value
                if (isinstance(holder, ast.Name) and holder.id == "args") or (
                        isinstance(holder, ast.Attribute) and holder.attr == "args"
                        and isinstance(holder.value, ast.Name) and holder.value.id == "self"):
                    bucket.append((node.lineno, node.attr))
    seen: dict[str, None] = {}
    for _, attr in sorted(init) + sorted(rest):
        seen.setdefault(attr, None)
    return list(seen)


def converts(trainer: type, config: type) -> bool:
    """True when the trainer's ``__init__`` builds ``config(**...)`` from what it was given
    (``SFTConfig(**dict_args)``): plain arguments are converted, not read as they are."""
    for cls in _own_classes(trainer):
        tree = _class_tree(cls)
        if tree is None:
            continue
        for func in ast.walk(tree):
            if isinstance(func, ast.FunctionDef) and func.name == "__init__":
                for node in ast.walk(func):
                    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                            and node.func.id == config.__name__ \
                            and any(k.arg is None for k in node.keywords):
                        return True
    return False


def changed_defaults(given: type, config: type) -> list[str]:
    """``name=value`` for each field whose literal default differs between ``given`` and
    ``config``, with ``given``'s value: what a swap to ``config`` keeps as it was."""
    if not (dataclasses.is_dataclass(given) and dataclasses.is_dataclass(config)):
        return []
    before = {f.name: f.default for f in dataclasses.fields(given)}
    kept = []
    for f in dataclasses.fields(config):
        if f.name not in before or not f.init:
            continue
        old, new = before[f.name], f.default
        if old is dataclasses.MISSING or new is dataclasses.MISSING:
            continue
        text = _literal(old)
        if text is not None and old != new and _literal(new) is not None:
            kept.append(f"{f.name}={text}")
    return kept


def pairing_finding(trainer: type, given: type) -> dict[str, Any] | None:
    """The error ``trainer`` raises when given arguments of class ``given``, or ``None``."""
    config = paired_config(trainer)
    if config is None or not is_training_args(given) or issubclass(given, config) \
            or converts(trainer, config):
        return None
    have = _fields(given)
    missing = [a for a in args_reads(trainer) if a not in have and a in _fields(config)]
    if not missing:
        return None
    return {"type": "AttributeError",
            "message": f"'{given.__name__}' object has no attribute '{missing[0]}'",
            "facts": {"pairs_with": importable(config), "trainer": importable(trainer),
                      "given": given.__name__, "keeps": ", ".join(changed_defaults(given, config)),
                      "reads": ", ".join(missing[:5])}}


def accepts(obj: Any, name: str) -> bool | None:
    """Whether ``obj(...)`` takes keyword ``name`` (``None``: a ``**kwargs`` or no
    signature, so unknown)."""
    sig = _signature(obj)
    if sig is None:
        return None
    params = sig.parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    return any(p.name == name and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                             inspect.Parameter.KEYWORD_ONLY) for p in params)


def keyword_move(trainer: type, keyword: str, partners: list[str], given: type | None
                 ) -> dict[str, str]:
    """Where a keyword ``trainer`` rejects belongs: its paired configuration class, under
    the same name or a renamed one of ``partners``; with what a swap of the arguments'
    class ``given`` (the script builds them, when known) to that class keeps. Empty when
    the configuration takes neither."""
    config = paired_config(trainer)
    if config is None:
        return {}
    for name in (keyword, *partners):
        if accepts(config, name):
            facts = {"moves_to": importable(config), "as": name}
            if given is not None and is_training_args(given) and not issubclass(given, config):
                facts["keeps"] = ", ".join(changed_defaults(given, config))
            return facts
    return {}
