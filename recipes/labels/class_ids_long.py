"""class-ids-as-floats: whole class ids built as a float tensor in the user's own code.

Cross-entropy takes class ids as int64 (``expected target dtype to be Long or Byte, but
got Float``, torch 2.13, measured); the facts at the loss show whole numbers in
``[0, num_classes)`` stored as floats. In a hand-written loop the float comes from one
token of the script: ``torch.tensor(labels, dtype=torch.float)``, ``torch.FloatTensor(y)``
(``torch.Tensor(y)`` is float32 too),
``y.float()``, ``y.to(torch.float32)``. The recipe follows the loss's target at the failing
line back through the script, by position, to that token, and makes it int64 there:

- the target (the loss's second argument, ``target=``, or a model's ``labels=``) is a
  name: its assignment before the line (``y = y.to(device)`` is followed through), or the
  element of a ``for`` target (``for x, y in loader``, ``for i, (x, y) in
  enumerate(loader)``), or ``batch[1]``; a slice (``y[i:i + 8]``) keeps the dtype, so it
  is followed to the sliced tensor;
- a ``for`` over a ``DataLoader`` of a ``TensorDataset(features, labels)`` gives position
  ``i`` of each batch from the dataset's tensor ``i`` (``enumerate``, ``zip`` and ``tqdm``
  are followed too); a ``for`` over a generator function of the script gives position
  ``i`` of what its ``yield`` statements give (all of them the same float token);
- the chain ends at the float token, changed to its int64 form (``dtype=torch.long``,
  ``torch.LongTensor``, ``.long()``, ``.to(torch.long)``; ``dtype=float`` becomes
  ``dtype=int``). Anything else on the way (a ``Dataset`` column, a function's return) and
  no edit is made: the category's advice names the line and the value instead.
"""

from __future__ import annotations

from typing import ClassVar

import libcst as cst
import libcst.matchers as m
from libcst.metadata import PositionProvider

from autofix.categories.failure import Failure, labels_at_loss
from autofix.toolkit import Example, NotApplicable, Recipe, code, patterns
from autofix.types import ExceptionInfo, FrameFacts

_LOSSES = (patterns.CLASS_ID_LOSS_MODULE, patterns.CLASS_ID_LOSS_FUNCTION)
_PASS_THROUGH = ("to", "cuda", "cpu", "squeeze", "view", "reshape", "flatten", "detach")
#: How many links the trace follows before it gives up (a cycle, an odd program).
_DEPTH = 12


def _float_failure() -> ExceptionInfo:
    target = {"kind": "tensor", "dtype": "torch.float32", "shape": [8], "min": 0, "max": 1,
              "integral": True}
    logits = {"kind": "tensor", "dtype": "torch.float32", "shape": [8, 2]}
    return ExceptionInfo("builtins.RuntimeError", "expected target dtype to be Long or Byte, "
                         "but got Float", facts=(
                             FrameFacts("torch/nn/functional.py", 1, "cross_entropy", False,
                                        {"input": logits, "target": target}),))


_LOOP = (
    "import torch\n"
    "from torch.utils.data import DataLoader, TensorDataset\n"
    "labels = torch.tensor(labels, dtype=torch.float)\n"
    "loader = DataLoader(TensorDataset(features, labels), batch_size=8)\n"
    "loss_fn = torch.nn.CrossEntropyLoss()\n"
    "for epoch in range(3):\n"
    "    for x, y in loader:\n"
    "        loss = loss_fn(model(x), y.to(device))\n"
)


class ClassIdsLong(Recipe):
    id = "class-ids-long"
    category = "class-ids-as-floats"
    requires_imports = ("torch",)
    title = "build the class ids as int64 where the script makes them floats"
    nothing_to_do = ("the loss's target at the failing line does not come from a float "
                     "tensor the script builds (dtype=torch.float, FloatTensor, .float())")
    restores = ("class-ids-as-floats",)

    examples: ClassVar[tuple[Example, ...]] = (
        Example(before=_LOOP, after=_LOOP.replace("dtype=torch.float)", "dtype=torch.long)"),
                line=8, failure=_float_failure()),
        Example(
            before=(
                "import torch\n"
                "import torch.nn.functional as F\n"
                "for i, (ids, target) in enumerate(zip(inputs, targets)):\n"
                "    target = target.float()\n"
                "    loss = F.cross_entropy(model(ids), target)\n"
            ),
            after=(
                "import torch\n"
                "import torch.nn.functional as F\n"
                "for i, (ids, target) in enumerate(zip(inputs, targets)):\n"
                "    target = target.long()\n"
                "    loss = F.cross_entropy(model(ids), target)\n"
            ),
            line=5, failure=_float_failure(),
        ),
        Example(  # a model's own loss from labels=, built with torch.FloatTensor
            before=(
                "import torch\n"
                "y = torch.FloatTensor(ids)\n"
                "for batch in DataLoader(TensorDataset(x, y)):\n"
                "    out = model(batch[0], labels=batch[1])\n"
            ),
            after=(
                "import torch\n"
                "y = torch.LongTensor(ids)\n"
                "for batch in DataLoader(TensorDataset(x, y)):\n"
                "    out = model(batch[0], labels=batch[1])\n"
            ),
            line=4, failure=_float_failure(),
        ),
        Example(  # batches sliced from the tensor by hand, unpacked from a tuple
            before=(
                "import torch\n"
                "y = torch.tensor(labels, dtype=torch.float)\n"
                "for i in range(0, 64, 8):\n"
                "    xb, yb = x[i:i + 8], y[i:i + 8]\n"
                "    loss = loss_fn(model(xb), yb)\n"
                "loss_fn = torch.nn.CrossEntropyLoss()\n"
            ),
            after=(
                "import torch\n"
                "y = torch.tensor(labels, dtype=torch.long)\n"
                "for i in range(0, 64, 8):\n"
                "    xb, yb = x[i:i + 8], y[i:i + 8]\n"
                "    loss = loss_fn(model(xb), yb)\n"
                "loss_fn = torch.nn.CrossEntropyLoss()\n"
            ),
            line=5, failure=_float_failure(),
        ),
        Example(  # the batches come from a generator function of the script
            before=(
                "import torch\n"
                "def batches(n):\n"
                "    for _ in range(n):\n"
                "        x = torch.randn(8, 4)\n"
                "        yield x, (x[:, 0] > 0).float()\n"
                "for features, target in batches(20):\n"
                "    loss = torch.nn.functional.cross_entropy(model(features), target)\n"
            ),
            after=(
                "import torch\n"
                "def batches(n):\n"
                "    for _ in range(n):\n"
                "        x = torch.randn(8, 4)\n"
                "        yield x, (x[:, 0] > 0).long()\n"
                "for features, target in batches(20):\n"
                "    loss = torch.nn.functional.cross_entropy(model(features), target)\n"
            ),
            line=7, failure=_float_failure(),
        ),
        Example(  # the floats come from a datasets column: no token of the script to change
            before=(
                "import torch\n"
                "for batch in loader:\n"
                "    loss = torch.nn.functional.cross_entropy(model(batch['x']), batch['label'])\n"
            ),
            line=3, failure=_float_failure(),
        ),
    )

    def visit_Module(self, node: cst.Module) -> bool:
        self.require_facts()
        self.tree = node
        self.losses = self._loss_names(node)
        target = self._target(self.rc.diagnosis.line)
        self.site = self._trace(target, [], self.rc.diagnosis.line, 0) if target else None
        return True

    def require_facts(self) -> None:
        """Raise ``NotApplicable`` unless the facts at the failure show the float values
        this recipe traces (here: a target at a loss)."""
        exc = self.rc.diagnosis.failure
        if exc is None or labels_at_loss(Failure(exc)) is None:
            raise NotApplicable("the facts at the failure show no target at a loss")

    def _line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def _loss_names(self, node: cst.Module) -> set[str]:
        names = set()
        for assign in m.findall(node, m.Assign(value=m.Call())):
            assert isinstance(assign, cst.Assign)
            call = cst.ensure_type(assign.value, cst.Call)
            if any(self.is_qualified(call.func, p) for p in _LOSSES) and \
                    len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name):
                names.add(assign.targets[0].target.value)
        return names

    def _is_loss(self, func: cst.BaseExpression) -> bool:
        if isinstance(func, cst.Name) and func.value in self.losses:
            return True
        if isinstance(func, cst.Call):  # nn.CrossEntropyLoss()(logits, y)
            func = func.func
        return any(self.is_qualified(func, p) for p in _LOSSES)

    def _target(self, line: int) -> cst.BaseExpression | None:
        """The loss's target (or a model's ``labels=``) in a call on the failing line."""
        for call in m.findall(self.tree, m.Call()):
            assert isinstance(call, cst.Call)
            if not line or self._line(call) != line:
                continue
            keywords = {a.keyword.value: a.value for a in call.args if a.keyword}
            positional = [a.value for a in call.args if a.keyword is None and not a.star]
            if self._is_loss(call.func):
                found = keywords.get("target") or (positional[1] if len(positional) > 1
                                                   else None)
                if found is not None:
                    return found
            elif "labels" in keywords:
                return keywords["labels"]
        return None

    def _binding(self, name: str, before: int) -> tuple[cst.CSTNode, list[int]] | None:
        """The last statement before line ``before`` that binds ``name`` (an assignment or
        a ``for``), with the position of ``name`` in its target."""
        best: tuple[int, cst.CSTNode, list[int]] | None = None
        for node in m.findall(self.tree, m.Assign() | m.For()):
            line = self._line(node)
            if line > before:
                continue
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) \
                else [cst.ensure_type(node, cst.For).target]
            for target in targets:
                path = _path_of(name, target)
                if path is not None and (best is None or line >= best[0]):
                    best = (line, node, path)
        return (best[1], best[2]) if best else None

    def _trace(self, expr: cst.BaseExpression, pos: list[int], at: int, depth: int
               ) -> cst.Call | None:
        """The float-making call that ``expr`` (position ``pos`` of it) comes from."""
        if depth > _DEPTH:
            return None
        if isinstance(expr, cst.Name):
            bound = self._binding(expr.value, at)
            if bound is None:
                return None
            node, path = bound
            line = self._line(node)
            if isinstance(node, cst.Assign):
                return self._trace(node.value, path + pos, line, depth + 1)
            assert isinstance(node, cst.For)
            return self._element(node.iter, path + pos, line, depth + 1)
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and \
                isinstance(expr.slice[0].slice, cst.Index) and \
                isinstance(expr.slice[0].slice.value, cst.Integer):
            index = int(expr.slice[0].slice.value.value)
            return self._trace(expr.value, [index, *pos], at, depth + 1)
        if isinstance(expr, cst.Subscript) and not pos and all(
                isinstance(e.slice, cst.Slice) for e in expr.slice):
            return self._trace(expr.value, pos, at, depth + 1)  # y[i:i + 8]: same dtype
        if isinstance(expr, cst.Tuple) and pos and pos[0] < len(expr.elements):
            return self._trace(expr.elements[pos[0]].value, pos[1:], at, depth + 1)
        if not isinstance(expr, cst.Call) or pos:
            return None
        if _float_edit(self, expr) is not None:
            return expr
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in _PASS_THROUGH:
            return self._trace(func.value, pos, at, depth + 1)
        return None

    def _element(self, iterable: cst.BaseExpression, pos: list[int], at: int, depth: int
                 ) -> cst.Call | None:
        """Where position ``pos`` of an element of ``iterable`` comes from."""
        if depth > _DEPTH:
            return None
        if isinstance(iterable, cst.Name):
            bound = self._binding(iterable.value, at)
            if bound is None or not isinstance(bound[0], cst.Assign) or bound[1]:
                return None
            return self._element(bound[0].value, pos, self._line(bound[0]), depth + 1)
        if not isinstance(iterable, cst.Call) or not iterable.args:
            return None
        first = iterable.args[0].value
        name = _callee(iterable.func)
        if name == "enumerate" and pos and pos[0] == 1:
            return self._element(first, pos[1:], at, depth + 1)
        if name == "zip" and pos and pos[0] < len(iterable.args):
            return self._element(iterable.args[pos[0]].value, pos[1:], at, depth + 1)
        if name == "tqdm":
            return self._element(first, pos, at, depth + 1)
        if self.is_qualified(iterable.func, patterns.DATALOADER) \
                or name == "DataLoader":
            return self._dataset(first, pos, at, depth + 1)
        return self._yielded(iterable.func, pos, depth + 1)

    def _yielded(self, func: cst.BaseExpression, pos: list[int], depth: int
                 ) -> cst.Call | None:
        """Position ``pos`` of what a generator function of the script yields: the one
        float-making call all its ``yield`` statements lead to (``None`` when they lead to
        none, or to different ones)."""
        if not isinstance(func, cst.Name):
            return None
        defs = [d for d in m.findall(self.tree, m.FunctionDef(name=m.Name(func.value)))
                if isinstance(d, cst.FunctionDef)]
        if len(defs) != 1:
            return None
        sites = set()
        for node in m.findall(defs[0], m.Yield()):
            value = cst.ensure_type(node, cst.Yield).value
            if value is None or isinstance(value, cst.From):
                return None
            site = self._trace(value, pos, self._line(node), depth + 1)
            if site is None:
                return None
            sites.add(site)
        return sites.pop() if len(sites) == 1 else None

    def _dataset(self, dataset: cst.BaseExpression, pos: list[int], at: int, depth: int
                 ) -> cst.Call | None:
        """Position ``pos`` of a ``TensorDataset``'s items: its tensor ``pos[0]``."""
        if isinstance(dataset, cst.Name):
            bound = self._binding(dataset.value, at)
            if bound is None or not isinstance(bound[0], cst.Assign) or bound[1]:
                return None
            return self._dataset(bound[0].value, pos, self._line(bound[0]), depth + 1)
        if isinstance(dataset, cst.Call) and _callee(dataset.func) == "TensorDataset" \
                and len(pos) == 1 and pos[0] < len(dataset.args):
            return self._trace(dataset.args[pos[0]].value, [], at, depth + 1)
        return None

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if original_node is not self.site:
            return updated_node
        new = _float_edit(self, original_node)
        if new is None:
            return updated_node
        self.changed(original_node, f"line {self._line(original_node)}: "
                                    f"{code(original_node)} -> {code(new)}")
        return new

    def summary(self) -> str:
        return "build the class ids as int64 (" + "; ".join(self.edits) + ")"


def _callee(func: cst.BaseExpression) -> str:
    return func.value if isinstance(func, cst.Name) else \
        func.attr.value if isinstance(func, cst.Attribute) else ""


def _path_of(name: str, target: cst.BaseExpression) -> list[int] | None:
    """Where ``name`` sits in an assignment or ``for`` target (``[]``: the whole target,
    ``[1, 0]``: ``(_, (name, _))``); ``None`` when it is not there."""
    if isinstance(target, cst.Name):
        return [] if target.value == name else None
    if isinstance(target, (cst.Tuple, cst.List)):
        for index, element in enumerate(target.elements):
            if isinstance(element, cst.StarredElement):
                return None
            inner = _path_of(name, element.value)
            if inner is not None:
                return [index, *inner]
    return None


def _float_edit(recipe: Recipe, call: cst.Call) -> cst.Call | None:
    """``call`` made to give int64 where it gives floats (``None``: not a float maker)."""
    func = call.func
    if recipe.is_qualified(func, patterns.TENSOR_MAKER):
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "dtype":
                if isinstance(arg.value, cst.Name) and arg.value.value == "float":
                    value: cst.BaseExpression = cst.Name("int")
                elif isinstance(arg.value, cst.Attribute) and \
                        recipe.is_qualified(arg.value, patterns.FLOAT_DTYPE):
                    value = arg.value.with_changes(attr=cst.Name("long"))
                else:
                    return None
                return call.with_changes(args=[a.with_changes(value=value) if a is arg else a
                                               for a in call.args])
        return None
    if recipe.is_qualified(func, patterns.FLOAT_TENSOR_CLASS) and isinstance(func, cst.Attribute):
        return call.with_changes(func=func.with_changes(attr=cst.Name("LongTensor")))
    if isinstance(func, cst.Attribute) and func.attr.value in ("float", "double", "half") \
            and not call.args:
        return call.with_changes(func=func.with_changes(attr=cst.Name("long")))
    if isinstance(func, cst.Attribute) and func.attr.value in ("to", "type") and \
            len(call.args) == 1 and isinstance(call.args[0].value, cst.Attribute) and \
            recipe.is_qualified(call.args[0].value, patterns.FLOAT_DTYPE):
        value = call.args[0].value.with_changes(attr=cst.Name("long"))
        return call.with_changes(args=[call.args[0].with_changes(value=value)])
    return None
