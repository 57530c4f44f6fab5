"""A label metric given the model's raw logits, read from the source (the source reading
``logits-metrics``, which the category ``metric-on-logits`` words as its diagnoses).

A hand-written evaluation loop runs after training, so its faults show only once a run
has trained to its end: ``accuracy_score(references, predictions)`` where ``predictions``
are the concatenated ``outputs.logits`` fails after the last step (the course's chapter 3
loop, ``ch3_04``). When another fault ends a run before its first step, that run cannot
reach the evaluation code, and the metric fault would cost the session a whole training
run of its own. :func:`logits_metrics` reads the script instead: a metric of
class ids (scikit-learn's classification metrics, ``evaluate``'s classification metrics
through ``compute``/``add_batch``) whose predictions argument is, through assignments,
``append``/``extend`` and data-plumbing calls only (``numpy()``, ``cpu()``, ``detach()``,
``np.concatenate``, ``torch.cat``, ``accelerator.gather_for_metrics``...), a model
output's ``.logits`` with nothing that turns scores into classes on the way (an
``argmax``, a ``max``, a comparison, an index, any call not in :data:`PLUMBING`).

Such a call raises on any data: scikit-learn refuses continuous multi-output targets
("Classification metrics can't handle a mix of multiclass and continuous-multioutput
targets"), ``evaluate`` casts the float scores to its integer feature and fails. The
engine adds the diagnoses of these readings to a failing run's fix group, so the
verifying run proves the argmax with the rest; they never start a fix by themselves.
A script that trains a regression head (``num_labels=1`` or a ``regression`` problem type
anywhere in it) gives none: there the logits are the prediction and an argmax is wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider, QualifiedNameProvider

from autofix.toolkit.edits import argument
from autofix.toolkit.patterns import SKLEARN_LABEL_METRIC

#: ``evaluate.load`` names whose ``predictions`` are class ids.
EVALUATE_LABEL_METRICS = frozenset(("accuracy", "f1", "precision", "recall",
                                    "matthews_correlation", "confusion_matrix", "glue"))
#: What loads a metric by name (``evaluate.load("accuracy")``; datasets' old ``load_metric``).
METRIC_LOADERS = frozenset(("evaluate.load", "datasets.load_metric"))
#: Calls that move values without changing what they are, methods of the value
#: (``logits.cpu().numpy()``): the logits stay logits through them.
METHODS = frozenset(("numpy", "cpu", "detach", "tolist", "to", "float", "contiguous",
                     "clone"))
#: ... methods that gather their argument across processes (``accelerator.gather(x)``) ...
GATHERS = frozenset(("gather", "gather_for_metrics", "pad_across_processes"))
#: ... and functions of it (``np.concatenate(values)``, ``torch.cat(values)``).
FUNCTIONS = frozenset(("concatenate", "cat", "stack", "vstack", "hstack", "array", "asarray",
                       "tensor", "as_tensor", "list"))
PLUMBING = METHODS | GATHERS | FUNCTIONS
_REGRESSION = re.compile(r"num_labels\s*=\s*1\b|regression")
#: How many assignments a value is followed through.
_DEPTH = 6

_Scope = cst.FunctionDef | None


def _name_of(func: cst.BaseExpression) -> str:
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return ""


@dataclass
class _Collector(cst.CSTVisitor):
    """Values given to each name per function (assignments, ``+=``, ``append``/``extend``
    arguments), the names bound some other way (parameters, ``for``/``with``/comprehension
    targets, lambda parameters: their values are not followed), the metric calls and their
    predictions, and what each name is loaded with (``evaluate.load``: the metric's name,
    anything else "")."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider)

    values: dict[tuple[_Scope, str], list[cst.BaseExpression]] = field(default_factory=dict)
    opaque: set[tuple[_Scope, str]] = field(default_factory=set)
    metrics: list[tuple[cst.Call, cst.BaseExpression, _Scope, str]] = field(
        default_factory=list)
    loads: dict[tuple[_Scope, str], list[str]] = field(default_factory=dict)
    stack: list[cst.FunctionDef] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__()

    @property
    def scope(self) -> _Scope:
        return self.stack[-1] if self.stack else None

    def _hide(self, target: cst.CSTNode) -> None:
        """Every name bound by ``target`` (a name, a tuple of names...) is opaque here."""
        if isinstance(target, cst.Name):
            self.opaque.add((self.scope, target.value))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._hide(element.value)
        elif isinstance(target, cst.StarredElement):
            self._hide(target.value)

    def _hide_params(self, params: cst.Parameters) -> None:
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            self.opaque.add((self.scope, param.name.value))
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                self.opaque.add((self.scope, star.name.value))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.append(node)
        self._hide_params(node.params)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.stack.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._hide_params(node.params)

    def visit_For(self, node: cst.For) -> None:
        self._hide(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._hide(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._hide(node.asname.name)

    def _give(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.values.setdefault((self.scope, target.value), []).append(value)
            self.loads.setdefault((self.scope, target.value), []).append(self._loaded(value))
        elif isinstance(target, (cst.Tuple, cst.List)) and isinstance(
                value, (cst.Tuple, cst.List)) and len(target.elements) == len(value.elements):
            for t, v in zip(target.elements, value.elements, strict=True):  # a, b = [], []
                self._give(t.value, v.value)
        elif isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, cst.Call) \
                and _name_of(value.func) in GATHERS and value.args \
                and isinstance(value.args[0].value, (cst.Tuple, cst.List)):
            # p, r = accelerator.gather_for_metrics((p, r)): each gathered as it was
            self._give(target, value.args[0].value)
        else:
            self._hide(target)

    def _loaded(self, value: cst.BaseExpression) -> str:
        """The label metric ``value`` loads (``evaluate.load("accuracy")``), else ""."""
        if not isinstance(value, cst.Call):
            return ""
        names = {q.name for q in self.get_metadata(QualifiedNameProvider, value.func, set())}
        arg = next((a.value for a in value.args if a.keyword is None
                    or a.keyword.value == "path"), None)
        if names & METRIC_LOADERS and isinstance(arg, cst.SimpleString) and \
                arg.evaluated_value in EVALUATE_LABEL_METRICS:
            return str(arg.evaluated_value)
        return ""

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._give(target.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._give(node.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._give(node.target, node.value)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("append", "extend") \
                and node.args:
            self._give(func.value, node.args[0].value)
        names = {q.name for q in self.get_metadata(QualifiedNameProvider, func, set())}
        metric = next((n for n in names if re.fullmatch(SKLEARN_LABEL_METRIC, n)), "")
        if metric:
            given = argument(node, "y_pred", 1)
            if given is not None:
                self.metrics.append((node, given, self.scope, metric.rsplit(".", 1)[1]))
            return
        if isinstance(func, cst.Attribute) and func.attr.value in ("compute", "add_batch",
                                                                   "add") \
                and isinstance(func.value, cst.Name):
            given = next((a.value for a in node.args if a.keyword is not None
                          and a.keyword.value in ("predictions", "prediction")), None)
            if given is not None:
                self.metrics.append((node, given, self.scope,
                                     f"{func.value.value}.{func.attr.value}"))

    def lookup(self, scope: _Scope, name: str) -> tuple[_Scope, bool]:
        """Where ``name`` read in ``scope`` is bound: ``scope`` itself when it binds it,
        else the module; and whether its values can be followed (False: bound by a
        parameter, a loop or comprehension target...)."""
        if scope is not None and (scope, name) not in self.values \
                and (scope, name) not in self.opaque:
            scope = None
        return scope, (scope, name) not in self.opaque


class _Flow:
    """Whether a value is a model output's ``.logits`` carried through plumbing only."""

    def __init__(self, collected: _Collector) -> None:
        self.c = collected

    def of(self, expr: cst.BaseExpression, scope: _Scope, depth: int = 0,
           seen: frozenset[str] = frozenset()) -> str:
        """"logits", "none" (nothing: an empty list, a literal) or "other" (anything
        else: a class id, a transform, a value this reading cannot follow)."""
        if depth > _DEPTH:
            return "other"
        if isinstance(expr, cst.Attribute):
            return "logits" if expr.attr.value == "logits" else "other"
        if isinstance(expr, cst.Subscript):  # outputs["logits"]
            key = expr.slice[0].slice if len(expr.slice) == 1 else None
            return "logits" if isinstance(key, cst.Index) and isinstance(
                key.value, cst.SimpleString) and key.value.evaluated_value == "logits" \
                else "other"
        if isinstance(expr, cst.Name):
            if expr.value in seen:
                return "none"
            scope, followed = self.c.lookup(scope, expr.value)
            values = self.c.values.get((scope, expr.value))
            if not followed or not values:
                return "other"
            return self._all([self.of(v, scope, depth + 1, seen | {expr.value})
                              for v in values])
        if isinstance(expr, (cst.List, cst.Tuple)):
            return self._all([self.of(e.value, scope, depth + 1, seen)
                              for e in expr.elements if isinstance(e, cst.Element)])
        if isinstance(expr, cst.ListComp):  # [o.logits.numpy() for o in outputs]
            return self.of(expr.elt, scope, depth + 1, seen)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            return self._all([self.of(expr.left, scope, depth + 1, seen),
                              self.of(expr.right, scope, depth + 1, seen)])
        if isinstance(expr, cst.Call):
            name = _name_of(expr.func)
            if name not in PLUMBING:
                return "other"
            parts = [a.value for a in expr.args if a.keyword is None]
            if isinstance(expr.func, cst.Attribute) and name in METHODS:
                parts = [expr.func.value]
            return self._all([self.of(p, scope, depth + 1, seen) for p in parts[:1]])
        return "other"

    @staticmethod
    def _all(results: list[str]) -> str:
        if "other" in results:
            return "other"
        return "logits" if "logits" in results else "none"


def logits_metrics(source: str) -> list[dict[str, Any]]:
    """The label metrics of ``source`` (the script, as the recipes read it: a notebook's
    code cells joined) given a model's raw logits, one reading per call (module docstring):
    ``name`` (the metric as called), ``predictions`` (the argument's code), ``line`` and
    ``line_text`` (the metric call's). None for a source that does not parse or trains a
    regression head."""
    if "logits" not in source or _REGRESSION.search(source):
        return []
    try:
        wrapper = MetadataWrapper(cst.parse_module(source))
    except cst.ParserSyntaxError:
        return []
    collected = _Collector()
    wrapper.visit(collected)
    flow = _Flow(collected)
    lines = source.splitlines()
    found: list[dict[str, Any]] = []
    positions = wrapper.resolve(PositionProvider)
    for call, given, scope, name in collected.metrics:
        if "." in name:  # evaluate: only a name every binding loads a label metric to
            metric = name.split(".", 1)[0]
            where, followed = collected.lookup(scope, metric)
            loads = collected.loads.get((where, metric), [])
            if not followed or not loads or not all(loads):
                continue
        if flow.of(given, scope) != "logits":
            continue
        line = positions[call].start.line
        found.append({"name": name, "predictions": cst.Module([]).code_for_node(given),
                      "line": line, "line_text": lines[line - 1] if line <= len(lines) else ""})
    return found
