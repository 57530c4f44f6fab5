"""Checks a script's library references against the installed libraries, without running it.

Executed by path with the user's training interpreter (``python api_check.py``), where
autofix is not installed: standard library only; the checked libraries are imported here.

Reads one JSON document on standard input::

    {"imports": [{"module": "transformers", "name": "AdamW", "line": 3, "file": ""}, ...],
     "calls": [{"target": "transformers.TrainingArguments", "keywords": ["evaluation_strategy"],
                "line": 9, "file": "", "args_class": "transformers.TrainingArguments",
                "args_line": 8, "args_file": "", "pair_target": "trl.SFTTrainer"}, ...],
     "aliases": [["evaluation_strategy", "eval_strategy"], ...],
     "classes": [{"name": "WeightedTrainer", "file": "", "line": 12,
                  "bases": ["transformers.Trainer"],
                  "methods": [{"name": "compute_loss", "line": 13, "decorated": false,
                               "params": [{"name": "self", "kind": "pos", "default": false},
                                          ...]}]}],
     "referenced": ["compute_loss", ...]}

(``file`` "" is the script, else a module of the user's; ``args_class`` the class that
builds what a trainer call gets as ``args``, when the source shows it; ``aliases`` keyword
names that are renames of each other; ``referenced`` every attribute name and string the
user's code mentions) and prints one JSON document: ``{"findings": [...], "errors": [...]}``.
A finding is the message the real failure would raise, so autofix classifies it like a
traceback, with its ``facts`` (what to change, as the installed library says it):

* ``ImportError: cannot import name 'AdamW' from 'transformers'`` for a name the module
  does not have (``hasattr`` on the real module: lazy attributes are resolved);
* ``TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'x'`` for a
  keyword that the callable's real signature (``inspect.signature``) does not accept and
  that no ``**kwargs`` would swallow; its facts name the renamed keyword the callable
  accepts (``accepts``), or for a trainer the configuration class that takes it
  (``moves_to``, ``as``);
* the overriding methods and trainer/arguments pairs of ``overrides.py``.

Anything that cannot be checked for certain (a module that does not import, an object
without a signature, ``**kwargs``) gives no finding: a finding must be one the run would hit.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import os
import sys
import types
from typing import Any


def _overrides() -> types.ModuleType:
    """``overrides.py`` of this folder (executed by path, this file has no package)."""
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("_autofix_overrides",
                                                  os.path.join(here, "overrides.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _resolve(target: str) -> Any:
    """The object a dotted qualified name names (``transformers.TrainingArguments``);
    raises ``LookupError`` when any part is missing."""
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except Exception:  # noqa: BLE001 - not a module at this depth
            continue
        for attr in parts[cut:]:
            try:
                obj = getattr(obj, attr)
            except Exception as exc:  # noqa: BLE001
                raise LookupError(target) from exc
        return obj
    raise LookupError(target)


def _unexpected(obj: Any, keywords: list[str]) -> list[str]:
    """The keywords ``obj(...)`` would reject; empty when unsure."""
    try:
        # follow_wrapped=False: a decorator (deprecate_kwarg) may accept what the wrapped
        # signature lacks (transformers 4.57 takes Trainer(tokenizer=) with a warning).
        signature = inspect.signature(obj, follow_wrapped=False)
    except (TypeError, ValueError):
        return []
    params = signature.parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return []
    accepted = {p.name for p in params if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                     inspect.Parameter.KEYWORD_ONLY)}
    return [k for k in keywords if k not in accepted]


def _partners(aliases: list[list[str]], keyword: str) -> list[str]:
    """The names ``keyword`` was renamed to or from."""
    return [b if a == keyword else a for a, b in aliases if keyword in (a, b)]


def _resolved(target: str) -> Any:
    try:
        return _resolve(target) if target else None
    except LookupError:
        return None


def check(request: dict[str, Any]) -> dict[str, Any]:
    """Findings for ``request`` (see the module docstring)."""
    findings: list[dict[str, Any]] = []
    errors: list[str] = []
    aliases = [list(pair) for pair in request.get("aliases", []) if len(pair) == 2]
    over: types.ModuleType | None = None
    if request.get("classes") or any(c.get("pair_target") or c.get("args_class")
                                     for c in request.get("calls", [])):
        over = _overrides()
    for item in request.get("imports", []):
        module, name = item["module"], item["name"]
        try:
            mod = importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001 - the run would fail earlier, differently
            errors.append(f"{module}: {type(exc).__name__}: {exc}")
            continue
        try:
            present = hasattr(mod, name)
        except Exception:  # noqa: BLE001 - a lazy attribute failing to import
            present = False
        if not present:
            findings.append({"line": item.get("line", 0), "file": item.get("file", ""),
                             "type": "ImportError", "library": module.split(".")[0],
                             "message": f"cannot import name '{name}' from '{module}'"})
    for item in request.get("calls", []):
        findings += _call_findings(item, aliases, over)
    referenced = set(request.get("referenced", []))
    for item in request.get("classes", []):
        bases = [b for b in (_resolved(t) for t in item.get("bases", [])) if inspect.isclass(b)]
        if bases and over is not None:
            try:
                findings += over.check_class(item, bases, referenced)
            except Exception as exc:  # noqa: BLE001 - a check that cannot read gives nothing
                errors.append(f"{item.get('name')}: {type(exc).__name__}: {exc}")
    return {"findings": findings, "errors": errors}


def _call_findings(item: dict[str, Any], aliases: list[list[str]],
                   over: types.ModuleType | None) -> list[dict[str, Any]]:
    """The findings of one call: keywords its callable rejects, a trainer given arguments
    of a class it is not paired with."""
    found: list[dict[str, Any]] = []
    target = item["target"]
    obj = _resolved(target)
    trainer = _resolved(item.get("pair_target", "")) or obj
    given = _resolved(item.get("args_class", ""))
    args_place = {"line": item.get("args_line", 0), "file": item.get("args_file", "")}
    index = _args_index(trainer)
    for arg in item.get("positional_args", []):  # Trainer(model, args), DPOTrainer(m, ref, args)
        if given is None and arg.get("index") == index:
            given = _resolved(arg.get("class", ""))
            args_place = {"line": arg.get("line", 0), "file": item.get("file", "")}
    place = {"line": item.get("line", 0), "file": item.get("file", ""),
             "library": (target or item.get("pair_target", "")).split(".")[0]}
    if obj is not None:
        owner = getattr(obj, "__qualname__", target.rsplit(".", 1)[-1])
        where = f"{owner}.__init__()" if inspect.isclass(obj) else f"{owner}()"
        for keyword in _unexpected(obj, list(item.get("keywords", []))):
            facts: dict[str, str] = {"keyword": keyword, "callable": target}
            partners = _partners(aliases, keyword)
            renamed = next((p for p in partners if _unexpected(obj, [p]) == []), "")
            if renamed:
                facts["accepts"] = renamed
            elif over is not None and inspect.isclass(obj) and over.is_trainer(obj):
                facts.update(over.keyword_move(obj, keyword, partners,
                                               given if inspect.isclass(given) else None))
                facts.setdefault("args_line", str(args_place["line"]))
            found.append({**place, "type": "TypeError", "facts": facts,
                          "message": f"{where} got an unexpected keyword argument "
                                     f"'{keyword}'"})
    if over is not None and inspect.isclass(trainer) and inspect.isclass(given) \
            and over.is_trainer(trainer):
        try:
            pairing = over.pairing_finding(trainer, given)
        except Exception:  # noqa: BLE001 - source that cannot be read gives no finding
            pairing = None
        if pairing is not None:
            found.append({**place, **pairing, **args_place})
    return found


def _args_index(cls: Any) -> int:
    """The position of ``args`` among the positional parameters of ``cls.__init__``
    (``self`` not counted); -1 when it has none."""
    if not inspect.isclass(cls):
        return -1
    try:
        params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    except (TypeError, ValueError):
        return -1
    names = [p.name for p in params if p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                  inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    return names.index("args") if "args" in names else -1


if __name__ == "__main__":
    print(json.dumps(check(json.load(sys.stdin))))
