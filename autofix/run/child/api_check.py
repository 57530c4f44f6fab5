"""Checks a script's library references against the installed libraries, without running it.

Executed by path with the user's training interpreter (``python api_check.py``), where
autofix is not installed: standard library only; the checked libraries are imported here.

Reads one JSON document on standard input::

    {"imports": [{"module": "transformers", "name": "AdamW", "line": 3}, ...],
     "calls": [{"target": "transformers.TrainingArguments", "keywords": ["evaluation_strategy"],
                "line": 9}, ...]}

and prints one JSON document: ``{"findings": [...], "errors": [...]}``. A finding is the
message the real failure would raise, so autofix classifies it like a traceback:

* ``ImportError: cannot import name 'AdamW' from 'transformers'`` for a name the module
  does not have (``hasattr`` on the real module: lazy attributes are resolved);
* ``TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'x'`` for a
  keyword that the callable's real signature (``inspect.signature``) does not accept and
  that no ``**kwargs`` would swallow.

Anything that cannot be checked for certain (a module that does not import, an object
without a signature, ``**kwargs``) gives no finding: a finding must be one the run would hit.
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
from typing import Any


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


def check(request: dict[str, Any]) -> dict[str, Any]:
    """Findings for ``request`` (see the module docstring)."""
    findings: list[dict[str, Any]] = []
    errors: list[str] = []
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
            findings.append({"line": item.get("line", 0), "type": "ImportError",
                             "library": module.split(".")[0],
                             "message": f"cannot import name '{name}' from '{module}'"})
    for item in request.get("calls", []):
        target = item["target"]
        try:
            obj = _resolve(target)
        except LookupError:
            continue  # reported by the import check when it is imported by name
        owner = getattr(obj, "__qualname__", target.rsplit(".", 1)[-1])
        where = f"{owner}.__init__()" if inspect.isclass(obj) else f"{owner}()"
        for keyword in _unexpected(obj, list(item.get("keywords", []))):
            findings.append({"line": item.get("line", 0), "type": "TypeError",
                             "library": target.split(".")[0],
                             "message": f"{where} got an unexpected keyword argument "
                                        f"'{keyword}'"})
    return {"findings": findings, "errors": errors}


if __name__ == "__main__":
    print(json.dumps(check(json.load(sys.stdin))))
