"""model-wrapped-dataparallel: the model is wrapped in ``DataParallel`` before ``Trainer``.

Public report: huggingface/transformers#33119 ("No columns in the dataset match the
model's forward method signature" once the model is wrapped). ``Trainer`` reads the
signature of ``model.forward`` to keep the dataset's columns; the wrapper's
``forward(*inputs, **kwargs)`` names none, so all are dropped. ``Trainer`` wraps the model
for several GPUs itself. Fix: ``model = torch.nn.DataParallel(model)`` is removed
(``pass`` when it was alone in its block); ``wrapped = DataParallel(model)`` becomes
``wrapped = model``.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, Recipe, patterns


class UnwrapDataParallel(Recipe):
    id = "unwrap-dataparallel"
    category = "model-wrapped-dataparallel"
    requires_imports = ("torch",)
    title = "give Trainer the model itself, not a DataParallel wrapper"
    nothing_to_do = "no X = torch.nn.DataParallel(model) assignment"

    examples = (
        Example(
            before=(
                "import torch\n"
                "model = make()\n"
                "model = torch.nn.DataParallel(model)\n"
                "trainer = Trainer(model=model)\n"
            ),
            after="import torch\nmodel = make()\ntrainer = Trainer(model=model)\n",
        ),
        Example(
            before=(
                "from torch.nn import DataParallel\n"
                "if torch.cuda.device_count() > 1:\n"
                "    model = DataParallel(model, device_ids=[0, 1])\n"
            ),
            after=(
                "from torch.nn import DataParallel\n"
                "if torch.cuda.device_count() > 1:\n"
                "    pass\n"
            ),
        ),
        Example(
            before="import torch\npmodel = torch.nn.DataParallel(model)\n",
            after="import torch\npmodel = model\n",
        ),
        Example(  # a user's own class named DataParallel
            before="class DataParallel:\n    pass\nmodel = DataParallel(model)\n",
        ),
    )

    def _wrapped(self, line: cst.SimpleStatementLine) -> tuple[str, cst.BaseExpression] | None:
        """(target, wrapped expression) of ``target = DataParallel(expr, ...)``."""
        if not m.matches(line, m.SimpleStatementLine(body=[m.Assign(
                targets=[m.AssignTarget(target=m.Name())], value=m.Call())])):
            return None
        assign = line.body[0]
        assert isinstance(assign, cst.Assign) and isinstance(assign.value, cst.Call)
        call = assign.value
        if not self.is_qualified(call.func, patterns.DATA_PARALLEL) or not call.args \
                or call.args[0].keyword is not None:
            return None
        target = assign.targets[0].target
        assert isinstance(target, cst.Name)
        return target.value, call.args[0].value

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.RemovalSentinel:
        found = self._wrapped(original_node)
        if found is None:
            return updated_node
        target, inner = found
        self.changed(original_node, "removed the DataParallel wrapper")
        if m.matches(inner, m.Name(target)):
            return cst.RemoveFromParent()
        assign = updated_node.body[0]
        assert isinstance(assign, cst.Assign)
        return updated_node.with_changes(body=[assign.with_changes(value=inner)])

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock,
                            updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        if updated_node.body:
            return updated_node
        return updated_node.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
