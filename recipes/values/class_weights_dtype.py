"""class-weights-dtype: class weights of another dtype than the logits reach the loss.

scikit-learn's ``compute_class_weight`` returns a float64 numpy array and
``torch.from_numpy`` keeps its dtype, so ``CrossEntropyLoss(weight=...)`` gets a
``torch.float64`` weight for ``torch.float32`` logits and torch raises "expected scalar
type Float but found Double". The dtypes come from the facts at the failure (the loss
frame's ``weight`` and ``input``). Fix, where the weight tensor is made (followed from the
loss's ``weight=``/``pos_weight=`` to its assignment): ``torch.tensor(...)`` /
``torch.as_tensor(...)`` get ``dtype=torch.<logits' dtype>``, anything else (``torch.
from_numpy(w)``) gets the cast method of that dtype (``.float()``).
"""

from __future__ import annotations

import libcst as cst

from autofix.categories.catalogue.values import WEIGHT_ARGS, class_weights_at_loss
from autofix.categories.failure import dtype
from autofix.toolkit import Example, NotApplicable, code, keyword, patterns
from autofix.toolkit.facts import example_failure, failure_of
from autofix.toolkit.scope import PlannedEdits, append_kw, replace_kw, replace_with
from autofix.toolkit.values import Values
from autofix.types import ExceptionInfo

#: The tensor method that casts to each floating dtype.
_CAST = {"float32": "float", "float64": "double", "float16": "half", "bfloat16": "bfloat16"}


def _failure(weight: str, logits: str = "torch.float32") -> ExceptionInfo:
    return example_failure(
        "RuntimeError", "expected scalar type Float but found Double", user={},
        library={"input": {"kind": "tensor", "dtype": logits, "shape": [8, 3]},
                 "target": {"kind": "tensor", "dtype": "torch.int64", "shape": [8]},
                 "weight": {"kind": "tensor", "dtype": weight, "shape": [3]}},
        library_file="torch/nn/functional.py", library_function="cross_entropy")


_HEAD = ("import numpy as np\nimport torch\n"
         "from sklearn.utils.class_weight import compute_class_weight\n"
         "w = compute_class_weight('balanced', classes=np.unique(y), y=y)\n")


class CastClassWeights(PlannedEdits):
    id = "class-weights-dtype"
    category = "class-weights-dtype"
    title = "make the class-weight tensor in the logits' dtype"
    requires_imports = ("torch",)
    nothing_to_do = "no class-weight tensor given to a torch loss as weight= / pos_weight="

    examples = (
        Example(
            before=_HEAD + "class_weights = torch.from_numpy(w)\n"
                           "def loss(logits, labels):\n"
                           "    fn = torch.nn.CrossEntropyLoss(weight=class_weights)\n"
                           "    return fn(logits, labels)\n",
            after=_HEAD + "class_weights = torch.from_numpy(w).float()\n"
                          "def loss(logits, labels):\n"
                          "    fn = torch.nn.CrossEntropyLoss(weight=class_weights)\n"
                          "    return fn(logits, labels)\n",
            failure=_failure("torch.float64"),
        ),
        Example(  # made inline with torch.tensor: the dtype is given there
            before=_HEAD + "loss = torch.nn.functional.cross_entropy(\n"
                           "    logits, labels, weight=torch.tensor(w))\n",
            after=_HEAD + "loss = torch.nn.functional.cross_entropy(\n"
                          "    logits, labels, weight=torch.tensor(w, dtype=torch.float32))\n",
            failure=_failure("torch.float64"),
        ),
        Example(  # the dtypes agree: another fault
            before=_HEAD + "fn = torch.nn.CrossEntropyLoss(weight=torch.tensor(w))\n",
            failure=_failure("torch.float32"),
        ),
        Example(  # no facts: no claim about the dtypes
            before=_HEAD + "fn = torch.nn.CrossEntropyLoss(weight=torch.tensor(w))\n",
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        self.values = Values(self)
        failure = failure_of(self.rc)
        found = class_weights_at_loss(failure) if failure is not None else None
        if found is None:
            raise NotApplicable("the facts at the failure show no class weights at the loss")
        weight, logits = found
        target = dtype(logits)
        if dtype(weight) == target or target not in _CAST:
            raise NotApplicable(f"the class weights are {dtype(weight)} and the logits "
                                f"{target}: nothing to cast to")
        for call in self.program.calls:
            if not self.is_qualified(call.func, patterns.WEIGHTED_LOSS):
                continue
            for name in WEIGHT_ARGS:
                arg = keyword(call, name)
                if arg is not None:
                    for source in self.values.origins(arg.value):
                        self._cast(source, target)

    def _cast(self, source: cst.CSTNode, target: str) -> None:
        if not isinstance(source, cst.BaseExpression) or source in self.plan:
            return
        if isinstance(source, cst.Call) and self.is_qualified(source.func, patterns.TENSOR_MAKER):
            value = cst.parse_expression(f"torch.{target}")
            edit = replace_kw("dtype", value) if keyword(source, "dtype") is not None \
                else append_kw("dtype", value)
            self.plan_edit(source, edit, f"dtype=torch.{target} for the class weights "
                                         f"({code(source)})")
            return
        if isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute) \
                and source.func.attr.value in _CAST.values():
            return  # already cast
        if isinstance(source, (cst.Name, cst.SimpleString, cst.Integer, cst.Float)):
            return  # nothing known about where it is made
        method = _CAST[target]
        cast = cst.Call(func=cst.Attribute(value=source, attr=cst.Name(method)))
        self.plan_edit(source, replace_with(cast),
                       f"{code(cast)}: the class weights in the logits' dtype ({target})")
