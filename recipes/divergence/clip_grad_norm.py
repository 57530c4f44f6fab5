"""exploding-gradients: the gradient norm explodes in a hand-written loop without clipping.

The child recorded each optimizer step's gradient norm (``facts["numeric"]["grad_norms"]``);
the category fires when it went non-finite or reached
:data:`autofix.categories.catalogue.divergence.EXPLODING` x its first step's. ``Trainer``
clips by default (``max_grad_norm=1.0``); a hand loop does only what it is told. The fix
inserts ``torch.nn.utils.clip_grad_norm_(PARAMS, 1.0)`` right before each
``optimizer.step()`` of an optimizer the file builds from ``torch.optim``, in the same
block (:mod:`autofix.toolkit.insert`), with ``PARAMS`` the optimizer's own
``model.parameters()`` when its first argument is that call and the name resolves at the
step, else the parameters of its ``param_groups``. 1.0 is ``Trainer``'s default. A loop
that already clips (``clip_grad_norm_``/``clip_grad_value_`` anywhere in the file) or
steps through a ``GradScaler`` (clipping needs ``unscale_`` first) is left alone.
"""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from autofix.toolkit import Example, NotApplicable, Recipe, code, insert
from autofix.toolkit.patterns import CLIP_GRAD, TORCH_OPTIMIZER

#: ``Trainer``'s ``max_grad_norm`` default.
MAX_NORM = "1.0"


class _Calls(cst.CSTVisitor):
    def __init__(self) -> None:
        self.calls: list[cst.Call] = []
        self.assigns: list[cst.Assign] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        self.assigns.append(node)


class ClipGradNorm(Recipe):
    id = "clip-grad-norm"
    category = "exploding-gradients"
    title = "clip the gradient norm before optimizer.step() in a hand-written loop"
    restores = ("exploding-gradients",)
    nothing_to_do = "no optimizer.step() of a torch.optim optimizer found"

    examples = (
        Example(
            before=(
                "import torch\n"
                "net = Net()\n"
                "opt = torch.optim.SGD(net.parameters(), lr=0.5)\n"
                "for xb, yb in loader:\n"
                "    opt.zero_grad()\n"
                "    loss_fn(net(xb), yb).backward()\n"
                "    opt.step()\n"
            ),
            after=(
                "import torch\n"
                "net = Net()\n"
                "opt = torch.optim.SGD(net.parameters(), lr=0.5)\n"
                "for xb, yb in loader:\n"
                "    opt.zero_grad()\n"
                "    loss_fn(net(xb), yb).backward()\n"
                "    torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)\n"
                "    opt.step()\n"
            ),
        ),
        Example(  # parameters given as a list: the optimizer's own groups are clipped
            before=(
                "from torch.optim import AdamW\n"
                "def train(params):\n"
                "    optimizer = AdamW(params, lr=1e-3)\n"
                "    for batch in batches:\n"
                "        step(batch).backward()\n"
                "        optimizer.step()\n"
            ),
            after=(
                "import torch\n"
                "from torch.optim import AdamW\n"
                "\n"
                "def train(params):\n"
                "    optimizer = AdamW(params, lr=1e-3)\n"
                "    for batch in batches:\n"
                "        step(batch).backward()\n"
                "        torch.nn.utils.clip_grad_norm_(\n"
                "            [p for group in optimizer.param_groups for p in group[\"params\"]],\n"
                "            1.0,\n"
                "        )\n"
                "        optimizer.step()\n"
            ),
        ),
        Example(  # already clipped
            before=(
                "import torch\n"
                "opt = torch.optim.SGD(net.parameters(), lr=0.5)\n"
                "loss.backward()\n"
                "torch.nn.utils.clip_grad_norm_(net.parameters(), 5.0)\n"
                "opt.step()\n"
            ),
        ),
        Example(  # a GradScaler steps: clipping needs unscale_ first
            before=(
                "import torch\n"
                "opt = torch.optim.SGD(net.parameters(), lr=0.5)\n"
                "scaler.scale(loss).backward()\n"
                "scaler.step(opt)\n"
            ),
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        found = _Calls()
        tree.visit(found)
        if any(self.is_qualified(c.func, CLIP_GRAD) for c in found.calls):
            raise NotApplicable("the loop already clips its gradients")
        optimizers: dict[str, cst.Call] = {}
        for assign in found.assigns:
            if isinstance(assign.value, cst.Call) and len(assign.targets) == 1 \
                    and isinstance(assign.targets[0].target, cst.Name) \
                    and self.is_qualified(assign.value.func, TORCH_OPTIMIZER):
                optimizers[assign.targets[0].target.value] = assign.value
        steps = [c for c in found.calls if isinstance(c.func, cst.Attribute)
                 and c.func.attr.value == "step" and not c.args
                 and isinstance(c.func.value, cst.Name) and c.func.value.value in optimizers]
        if not steps:
            raise NotApplicable(self.nothing_to_do)
        for call in steps:
            name = code(call.func.value) if isinstance(call.func, cst.Attribute) else ""
            params = self._params(optimizers[name], call, name)
            text = f"torch.nn.utils.clip_grad_norm_({params}, {MAX_NORM})"
            try:
                stmt = insert.enclosing_statement(self, call)
                tree = insert.insert_statements(tree, stmt, [insert.parse_statement(text)],
                                                before=True)
            except insert.NoPlace as exc:
                raise NotApplicable(str(exc)) from None
            self.changed(call, f"{text} before {name}.step()")
        AddImportsVisitor.add_needed_import(self.context, "torch")
        return tree

    def _params(self, optimizer: cst.Call, step: cst.Call, name: str) -> str:
        """What the new line clips: the optimizer's ``X.parameters()`` when ``X`` resolves
        at the step, else the parameters of its ``param_groups``."""
        first = optimizer.args[0].value if optimizer.args else None
        if isinstance(first, cst.Call) and isinstance(first.func, cst.Attribute) \
                and first.func.attr.value == "parameters" and not first.args \
                and isinstance(first.func.value, cst.Name) \
                and insert.resolves(self, step, first.func.value.value):
            return code(first)
        return f'[p for group in {name}.param_groups for p in group["params"]]'

    def summary(self) -> str:
        return f"clip the gradient norm to {MAX_NORM} ({'; '.join(self.edits)})"
