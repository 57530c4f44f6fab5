"""optimizer-before-model: the optimizer holds the parameters of a model the script replaced.

An optimizer takes the tensors its parameter list holds when it is built. A model made
again afterwards (a fresh initialisation with another seed), or a head put on after it (a
second stage of transfer learning), brings new tensors the optimizer never sees: it steps
the old ones, which get no gradient, and the trained model never changes. The probe's
step evidence shows it (none of the trained model's trainable tensors in the optimizer's
groups, the sampled weights unchanged, the optimizer's own tensors without gradients).

Fix, in the block where both happen: the statement that builds the optimizer (``opt =
torch.optim.Adam(model.parameters(), ...)``, or a call of the script's own function or
method that builds it from ``self.model``) moves to just after the last statement of that
block that replaces the model or one of its parts (``model = ...``, ``model.head = ...``),
when nothing between them uses the optimizer.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, NotApplicable, code, patterns
from autofix.toolkit.scope import PlannedEdits

#: The probe's step evidence for this fault (``ProbeReport.facts``).
_FACTS = {"step_evidence": {"cause": "other-parameters", "step": 10}}

_REPLACED = (
    "import torch\n"
    "model = make_model(seed=0)\n"
    "optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)\n"
    "print(count(model))\n"
    "model = make_model(seed=42)\n"
    "for epoch in range(3):\n"
    "    train(model, optimizer)\n"
)
_HEAD = (
    "import torch\n"
    "stage2 = torch.optim.Adam([p for p in net.parameters() if p.requires_grad], lr=3e-3)\n"
    "net.head = torch.nn.Linear(64, 3)\n"
    "fit(net, stage2)\n"
)
_SETUP = (
    "import torch\n"
    "class Experiment:\n"
    "    def setup(self, lr):\n"
    "        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=lr)\n"
    "exp = Experiment()\n"
    "exp.setup(lr=0.05)\n"
    "exp.model = wider()\n"
    "exp.train(x, y)\n"
)


def _owner_of_parameters(call: cst.Call) -> str | None:
    """``X`` of the one ``X.parameters()`` the optimizer call's arguments read (in a list,
    a comprehension, a ``filter``), as source text; ``None`` for none or several."""
    owners = {code(c.func.value) for c in m.findall(call, m.Call(func=m.Attribute(
        attr=m.Name("parameters")))) if isinstance(c, cst.Call)
        and isinstance(c.func, cst.Attribute)}
    return owners.pop() if len(owners) == 1 else None


def _replaces(stmt: cst.BaseStatement, owner: str) -> bool:
    """``stmt`` assigns ``owner`` or one of its attributes (``owner.head = ...``)."""
    for target in m.findall(stmt, m.AssignTarget()):
        assert isinstance(target, cst.AssignTarget)
        text = code(target.target)
        if text == owner or text.startswith(owner + "."):
            return True
    return False


def _text(stmt: cst.BaseStatement) -> str:
    """A statement's first line as written, without its comment."""
    if isinstance(stmt, cst.SimpleStatementLine) and stmt.body:
        return code(stmt.body[0]).strip().splitlines()[0]
    return code(stmt).strip().splitlines()[0]


class BuildOptimizerAfterModel(PlannedEdits):
    id = "build-optimizer-after-model"
    category = "optimizer-before-model"
    title = "build the optimizer after the model (or head) it trains is made"
    requires_imports = ("torch",)
    nothing_to_do = "no optimizer built before a statement that replaces its model"

    examples = (
        Example(before=_REPLACED, after=_REPLACED.replace(
            "optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)\n", "").replace(
            "model = make_model(seed=42)\n", "model = make_model(seed=42)\n"
            "optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)\n"),
            run_facts=_FACTS),
        Example(before=_HEAD, after=(
            "import torch\nnet.head = torch.nn.Linear(64, 3)\n"
            "stage2 = torch.optim.Adam([p for p in net.parameters() if p.requires_grad], "
            "lr=3e-3)\nfit(net, stage2)\n"), run_facts=_FACTS),
        Example(before=_SETUP, after=_SETUP.replace(
            "exp.setup(lr=0.05)\nexp.model = wider()\n",
            "exp.model = wider()\nexp.setup(lr=0.05)\n"), run_facts=_FACTS),
        Example(  # the optimizer is used before the model is replaced: not moved
            before=_REPLACED.replace("print(count(model))\n", "train(model, optimizer)\n"),
            run_facts=_FACTS),
        Example(  # the model is never replaced after the optimizer
            before="import torch\nmodel = make_model()\n"
                   "optimizer = torch.optim.Adam(model.parameters())\ntrain(model, optimizer)\n",
            run_facts=_FACTS),
    )

    def prepare(self, tree: cst.Module) -> None:
        evidence = self.rc.facts.get("step_evidence")
        if not isinstance(evidence, dict) or evidence.get("cause") != "other-parameters":
            raise NotApplicable("the step evidence shows no optimizer over other parameters")
        for block in m.findall(tree, m.IndentedBlock() | m.Module()):
            assert isinstance(block, (cst.IndentedBlock, cst.Module))
            self._block(block)
        if not self.plan:
            raise NotApplicable(self.nothing_to_do)

    def _builds(self, stmt: cst.BaseStatement) -> tuple[str, str] | None:
        """``(owner, optimizer)`` when ``stmt`` builds an optimizer from ``owner``'s
        parameters: directly (``optimizer`` the name it is bound to), or through a call of
        a method of the script whose body builds one from ``self.X`` (``obj.setup()``:
        owner ``obj.X``, optimizer ``obj.<attribute>``)."""
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            return None
        small = stmt.body[0]
        value = small.value if isinstance(small, (cst.Assign, cst.Expr)) else None
        if not isinstance(value, cst.Call):
            return None
        if self.is_qualified(value.func, patterns.TORCH_OPTIMIZER):
            owner = _owner_of_parameters(value)
            if owner is None or not isinstance(small, cst.Assign) or len(small.targets) != 1:
                return None
            return owner, code(small.targets[0].target)
        func = self.program.function_called(value) if not isinstance(
            value.func, cst.Attribute) else self._method(value)
        if func is None or not isinstance(value.func, cst.Attribute):
            return None
        receiver = code(value.func.value)
        for assign in m.findall(func, m.Assign(value=m.Call())):
            assert isinstance(assign, cst.Assign) and isinstance(assign.value, cst.Call)
            if not self.is_qualified(assign.value.func, patterns.TORCH_OPTIMIZER):
                continue
            owner = _owner_of_parameters(assign.value)
            target = code(assign.targets[0].target)
            if owner is not None and owner.startswith("self.") and target.startswith("self."):
                return receiver + owner[4:], receiver + target[4:]
        return None

    def _method(self, call: cst.Call) -> cst.FunctionDef | None:
        """The method of one of the script's classes that ``obj.name(...)`` calls, when
        exactly one class defines a method of that name."""
        assert isinstance(call.func, cst.Attribute)
        name = call.func.attr.value
        found = [s for cls in m.findall(self.program.tree, m.ClassDef())
                 if isinstance(cls, cst.ClassDef) for s in cls.body.body
                 if isinstance(s, cst.FunctionDef) and s.name.value == name]
        return found[0] if len(found) == 1 else None

    def _block(self, block: cst.IndentedBlock | cst.Module) -> None:
        body: Sequence[cst.BaseStatement] = block.body
        moves: list[tuple[int, int]] = []
        for i, stmt in enumerate(body):
            built = self._builds(stmt)
            if built is None:
                continue
            owner, optimizer = built
            later = [j for j in range(i + 1, len(body)) if _replaces(body[j], owner)]
            if not later:
                continue
            last = later[-1]
            if any(m.findall(body[j], m.Name(optimizer.split(".")[0]))
                   and optimizer in code(body[j]) for j in range(i + 1, last + 1)):
                continue  # the optimizer is used before the model is replaced
            moves.append((i, last))
        if not moves:
            return

        def edit(node: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(node, (cst.IndentedBlock, cst.Module))
            statements = list(node.body)
            for i, last in sorted(moves, reverse=True):
                moved = statements[i]
                statements.insert(last + 1, moved)
                del statements[i]
            return node.with_changes(body=statements)

        for i, last in moves:
            self.changed(body[i], f"{_text(body[i])} moved after {_text(body[last])}: the "
                                  "optimizer takes the parameters of the model it trains")
        self.plan[block] = edit
