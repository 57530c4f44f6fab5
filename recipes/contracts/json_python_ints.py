"""numpy-scalar-json: numpy scalars where ``json`` needs Python numbers.

Label ids from ``np.unique`` / ``np.arange`` used as ``id2label`` keys, a best epoch from
``np.argmax``, ``label2id`` values zipped from a numpy array: ``json.dump`` raises "keys
must be str, int, float, bool or None, not int64" or "Object of type int64 is not JSON
serializable". The facts at the failure give the value the encoder refused
(``autofix.categories.failure.json_refusal``: a 0-d numpy array, as a key or a value).

Fix where the value is produced, following the object the failing line's ``json.dump``
/ ``json.dumps`` call gets back through names, parameters (to the calls that give them)
and nested dicts:

- a dict literal: each entry whose value the facts show is a numpy scalar (the entry of
  the mapping the user's frame holds under that name), else whose value is computed by
  ``numpy``, becomes ``int(...)`` (``float(...)`` for a floating one);
- a dict comprehension over something numpy produced: its key (or value) ``int(...)``;
- ``dict(zip(keys, values))`` with a numpy side: that side ``map(int, ...)``.

When no ``json`` call is on the failing line (``model.save_pretrained(...)`` writes the
config), the values the script gives a config's ``id2label`` / ``label2id`` are followed
instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import libcst as cst
import libcst.matchers as m

from autofix.categories.failure import dtype, is_numpy_scalar, json_refusal
from autofix.toolkit import Example, NotApplicable, code, patterns
from autofix.toolkit.facts import example_failure
from autofix.toolkit.scope import PlannedEdits, replace_with, string_value
from autofix.toolkit.values import Values
from autofix.types import ExceptionInfo

from ._backward import calls_at, failing_line, the_failure, user_fact

#: How far names and parameters are followed back.
MAX_DEPTH = 6


def _failure(line: int, part: str, user: Mapping[str, Mapping[str, Any]] | None = None
             ) -> ExceptionInfo:
    scalar = {"kind": "array", "dtype": "int64", "shape": []}
    if part == "key":
        return example_failure(
            "TypeError", "keys must be str, int, float, bool or None, not int64",
            user=user or {}, library={"key": scalar}, library_file="json/encoder.py",
            library_function="_iterencode_dict", user_line=line)
    return example_failure(
        "TypeError", "Object of type int64 is not JSON serializable", user=user or {},
        library={"o": scalar}, library_file="json/encoder.py", library_function="default",
        user_line=line)


_SCALAR: dict[str, Any] = {"kind": "array", "dtype": "int64", "shape": []}
_METRICS = {"metrics": {"kind": "mapping", "keys": ["best", "acc"], "values": {
    "best": _SCALAR, "acc": {"kind": "number", "type": "float", "value": 0.9}}}}


class JsonPythonInts(PlannedEdits):
    id = "json-python-ints"
    category = "numpy-scalar-json"
    title = "convert numpy scalars to Python numbers where the dumped values are produced"
    subject_from_change = True
    nothing_to_do = "no numpy value found where the dumped object is built"

    examples = (
        Example(  # values of a dict literal, from the facts
            before=("import json\nimport numpy as np\n"
                    "metrics = {'best': np.argmax(accs), 'acc': max(accs)}\n"
                    "json.dump(metrics, f)\n"),
            after=("import json\nimport numpy as np\n"
                   "metrics = {'best': int(np.argmax(accs)), 'acc': max(accs)}\n"
                   "json.dump(metrics, f)\n"),
            failure=_failure(4, "value", _METRICS),
        ),
        Example(  # id2label keys from a comprehension over np.arange, nested in the dump
            before=("import json\nimport numpy as np\n"
                    "id2label = {i: str(n) for i, n in zip(np.arange(3), names)}\n"
                    "json.dump({'id2label': id2label}, f)\n"),
            after=("import json\nimport numpy as np\n"
                   "id2label = {int(i): str(n) for i, n in zip(np.arange(3), names)}\n"
                   "json.dump({'id2label': id2label}, f)\n"),
            failure=_failure(4, "key"),
        ),
        Example(  # dict(zip(...)) through a function's parameter
            before=("import json\nimport numpy as np\n"
                    "def save(label2id):\n    return json.dumps({'label2id': label2id})\n"
                    "ids = np.arange(3)\nsave(dict(zip(names, ids)))\n"),
            after=("import json\nimport numpy as np\n"
                   "def save(label2id):\n    return json.dumps({'label2id': label2id})\n"
                   "ids = np.arange(3)\nsave(dict(zip(names, map(int, ids))))\n"),
            failure=_failure(4, "value", {"ids": {"kind": "array", "dtype": "int64",
                                                  "shape": [3]}}),
        ),
        Example(  # save_pretrained writes the config whose id2label the script set
            before=("import json\nimport numpy as np\nids = np.unique(y)\n"
                    "model.config.id2label = {i: n for i, n in zip(ids, names)}\n"
                    "model.save_pretrained('out')\n"),
            after=("import json\nimport numpy as np\nids = np.unique(y)\n"
                   "model.config.id2label = {int(i): n for i, n in zip(ids, names)}\n"
                   "model.save_pretrained('out')\n"),
            failure=_failure(5, "key", {"ids": {"kind": "array", "dtype": "int64",
                                                "shape": [3]}}),
        ),
        Example(  # nothing numpy where the object is built
            before="import json\nmetrics = load()\njson.dump(metrics, f)\n",
            failure=_failure(3, "value"),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        self.values = Values(self)
        failure = the_failure(self)
        refused = json_refusal(failure)
        if refused is None:
            raise NotApplicable("the value json refused is no numpy scalar")
        calls = [c for c in calls_at(self, failing_line(self, failure))
                 if self.is_qualified(c.func, patterns.JSON_DUMP) and c.args
                 and c.args[0].keyword is None]
        self.refused = refused
        self.done: set[cst.CSTNode] = set()
        if calls:
            self._follow(calls[0].args[0].value, "", 0)
        else:  # a library writes the JSON (save_pretrained): the config's label maps
            for value in self._label_maps():
                self._follow(value, "", 1)
        if not self.done:
            raise NotApplicable(self.nothing_to_do)

    def _label_maps(self) -> list[cst.BaseExpression]:
        """The values the script gives a config's ``id2label`` / ``label2id``: assigned to
        the attribute (``model.config.id2label = ...``) or passed as a keyword."""
        names = m.Name("id2label") | m.Name("label2id")
        found: list[cst.BaseExpression] = []
        for assign in m.findall(self.program.tree, m.Assign(targets=[m.AssignTarget(
                target=m.Attribute(attr=names))])):
            assert isinstance(assign, cst.Assign)
            found.append(assign.value)
        for call in self.program.calls:
            found += [a.value for a in call.args if a.keyword is not None
                      and m.matches(a.keyword, names)]
        return found

    # -- following the dumped object back -------------------------------------------

    def _follow(self, expr: cst.BaseExpression, name: str, depth: int) -> None:
        if depth > MAX_DEPTH or expr in self.done:
            return
        if isinstance(expr, cst.Name):
            values = self.values.assignments(expr.value, expr)
            for _, value in values:
                self._follow(value, expr.value, depth + 1)
            func = self.program.function_of(expr)
            params = {p.name.value for p in func.params.params} if func is not None else set()
            if not values and func is not None and expr.value in params:
                for call in self.program.call_sites(func):
                    given = self.program.bound(func, call, expr.value)
                    if given is not None:
                        self._follow(given, expr.value, depth + 1)
        elif isinstance(expr, cst.Dict):
            self._dict(expr, name, depth)
        elif isinstance(expr, cst.DictComp):
            if self._numpy(expr.for_in.iter):
                self._wrap(expr.key if self.refused.part == "key" else expr.value,
                           self.refused.python_type)
        elif m.matches(expr, m.Call(func=m.Name("dict"), args=[m.Arg(value=m.Call(
                func=m.Name("zip"), args=[m.Arg(), m.Arg()]), keyword=None)])):
            assert isinstance(expr, cst.Call) and isinstance(expr.args[0].value, cst.Call)
            side = expr.args[0].value.args[0 if self.refused.part == "key" else 1]
            if self._numpy(side.value) and not m.matches(side.value, m.Call(func=m.Name("map"))):
                mapped = cst.parse_expression(f"map({self.refused.python_type}, "
                                              f"{code(side.value)})")
                self.plan_edit(side.value, replace_with(mapped),
                               f"{code(mapped)}: Python numbers, not numpy scalars")
                self.done.add(side.value)

    def _dict(self, expr: cst.Dict, name: str, depth: int) -> None:
        facts = (user_fact(the_failure(self), name) or {}).get("values") or {} if name else {}
        for element in expr.elements:
            if not isinstance(element, cst.DictElement):
                continue
            key = string_value(element.key) if isinstance(element.key, cst.SimpleString) \
                else None
            fact = facts.get(key) if key is not None else None
            if isinstance(element.value, (cst.Name, cst.Dict, cst.DictComp, cst.Call)) and \
                    not is_numpy_scalar(fact):
                self._follow(element.value, key or "", depth + 1)
            if self.refused.part == "key":
                if key is None and self._numpy(element.key):
                    self._wrap(element.key, self.refused.python_type)
            elif is_numpy_scalar(fact):
                self._wrap(element.value, "float" if "float" in dtype(fact) else "int")
            elif fact is None and self._numpy(element.value, direct=True):
                self._wrap(element.value, self.refused.python_type)

    # -- what is numpy, and the edit ------------------------------------------------

    def _numpy(self, expr: cst.BaseExpression, direct: bool = False) -> bool:
        """``expr`` is computed by a ``numpy`` call (itself or a subscript of one when
        ``direct``; anywhere inside it otherwise) or reads a local the facts show is a
        numpy array."""
        if direct:
            while isinstance(expr, cst.Subscript):
                expr = expr.value
            return isinstance(expr, cst.Call) and self.is_qualified(expr.func, patterns.NUMPY_ANY)
        for call in m.findall(expr, m.Call()):
            assert isinstance(call, cst.Call)
            if self.is_qualified(call.func, patterns.NUMPY_ANY):
                return True
        failure = the_failure(self)
        return any(isinstance(n, cst.Name) and (user_fact(failure, n.value) or {}).get(
            "kind") == "array" for n in m.findall(expr, m.Name()))

    def _wrap(self, expr: cst.BaseExpression, kind: str) -> None:
        if m.matches(expr, m.Call(func=m.Name("int") | m.Name("float") | m.Name("bool"))):
            return
        wrapped = cst.Call(func=cst.Name(kind), args=[cst.Arg(expr)])
        self.plan_edit(expr, replace_with(wrapped),
                       f"{code(wrapped)}: a Python {kind}, not a numpy scalar")
        self.done.add(expr)

