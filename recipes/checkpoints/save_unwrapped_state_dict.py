"""state-dict-key-prefix: a state dict saved from a ``DataParallel`` wrapper.

Public report: abhishekkrthakur/bert-sentiment#4 (``Error(s) in loading state_dict ...
Unexpected key(s) in state_dict: "module.bert..."``): ``nn.DataParallel`` (and
``DistributedDataParallel``) keep the model as ``.module``, so the wrapper's
``state_dict()`` names every weight ``module.<name>``; the bare model loaded elsewhere
expects ``<name>``. The fault is made where the weights are saved, so that is where the
fix goes: ``torch.save(model.state_dict(), path)`` becomes
``torch.save(model.module.state_dict(), path)`` when ``model`` is surely the wrapper there
(its last assignment before the save wraps it, outside any ``if``), and
``getattr(model, "module", model).state_dict()`` when it may or may not be.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, code, patterns
from autofix.toolkit.scope import PlannedEdits, replace_with
from autofix.toolkit.values import Values


class SaveUnwrappedStateDict(PlannedEdits):
    id = "save-unwrapped-state-dict"
    category = "state-dict-key-prefix"
    requires_words = (("state_dict",), ("DataParallel", "DistributedDataParallel"))
    requires_imports = ("torch",)
    title = "save the state dict of the model inside the DataParallel wrapper"
    nothing_to_do = "no torch.save(model.state_dict(), ...) of a DataParallel-wrapped model"

    examples = (
        Example(
            before=(
                "import torch\n"
                "from torch import nn\n"
                "def run():\n"
                "    model = Net()\n"
                "    model = nn.DataParallel(model)\n"
                "    torch.save(model.state_dict(), path)\n"
            ),
            after=(
                "import torch\n"
                "from torch import nn\n"
                "def run():\n"
                "    model = Net()\n"
                "    model = nn.DataParallel(model)\n"
                "    torch.save(model.module.state_dict(), path)\n"
            ),
        ),
        Example(  # wrapped only on several GPUs
            before=(
                "import torch\n"
                "model = Net()\n"
                "if torch.cuda.device_count() > 1:\n"
                "    model = torch.nn.DataParallel(model)\n"
                "torch.save(model.state_dict(), path)\n"
            ),
            after=(
                "import torch\n"
                "model = Net()\n"
                "if torch.cuda.device_count() > 1:\n"
                "    model = torch.nn.DataParallel(model)\n"
                'torch.save(getattr(model, "module", model).state_dict(), path)\n'
            ),
        ),
        Example(  # never wrapped
            before="import torch\nmodel = Net()\ntorch.save(model.state_dict(), path)\n",
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        self.values = Values(self)
        program = self.program
        for call in program.calls:
            if not self.is_qualified(call.func, patterns.TORCH_SAVE) or not call.args:
                continue
            obj = call.args[0].value
            if not m.matches(obj, m.Call(func=m.Attribute(value=m.Name(), attr=m.Name(
                    "state_dict")), args=[])):
                continue
            state = cst.ensure_type(obj, cst.Call)
            holder = cst.ensure_type(cst.ensure_type(state.func, cst.Attribute).value, cst.Name)
            before = sorted((tv for tv in self.values.assignments(holder.value, holder)
                             if program.line(tv[0]) < program.line(call)),
                            key=lambda tv: program.line(tv[0]))
            wraps = [tv for tv in before if isinstance(tv[1], cst.Call)
                     and self.is_qualified(tv[1].func, patterns.DATA_PARALLEL)]
            if not wraps:
                continue
            target, _ = before[-1]
            surely = before[-1] in wraps and not any(
                isinstance(a, (cst.If, cst.For, cst.While, cst.Try))
                for a in self._between(target, call))
            name = holder.value
            inner = f"{name}.module" if surely else f'getattr({name}, "module", {name})'
            new = cst.parse_expression(f"{inner}.state_dict()")
            self.plan_edit(obj, replace_with(new),
                           f"torch.save({code(new)}, ...) at line {program.line(call)}: the "
                           "model inside the DataParallel wrapper, so its keys have no "
                           "'module.' prefix")

    def _between(self, target: cst.CSTNode, use: cst.CSTNode) -> list[cst.CSTNode]:
        """The compound statements around ``target`` that do not also hold ``use``."""
        around_use = set(self.program.ancestors(use))
        out = []
        for anc in self.program.ancestors(target):
            if anc in around_use:
                break
            out.append(anc)
        return out
