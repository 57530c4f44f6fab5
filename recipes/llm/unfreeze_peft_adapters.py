"""unfreeze-peft-adapters: a loop that freezes every parameter after get_peft_model.

``get_peft_model`` freezes the base model itself and leaves only the adapter weights
trainable (PEFT's documentation); a loop written to "freeze the base" that runs after it
(``for p in model.parameters(): p.requires_grad = False``) freezes the adapters too, and
nothing can learn (the preflight's ``lm-trainable`` check: 0 parameters require grad;
with gradient checkpointing the run trains with a grad norm of 0 and a flat loss). The fix
removes that loop: the model's last assignment before the loop is the ``get_peft_model``
call, and the loop does nothing but set ``requires_grad`` to False on every parameter.
A loop that freezes some parameters only (an ``if``) is left alone.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, NotApplicable, code, patterns
from autofix.toolkit.operators import frozen_loop_variable
from autofix.toolkit.scope import PlannedEdits

_FROZEN = {"lm": {"params_trainable": 0, "params_total": 158656, "peft_adapter": "default",
                  "peft_inference_mode": False}}


class UnfreezePeftAdapters(PlannedEdits):
    id = "unfreeze-peft-adapters"
    category = "no-trainable-parameters"
    title = "drop the loop that freezes the PEFT model's adapters too"
    requires_words = (("requires_grad", "requires_grad_"), ("get_peft_model",))
    requires_imports = ("peft",)
    nothing_to_do = "no loop freezing every parameter of a get_peft_model(...) result"

    examples = (
        Example(
            before=(
                "from peft import get_peft_model\n"
                "model = get_peft_model(model, peft_config)\n"
                "for name, param in model.named_parameters():\n"
                "    param.requires_grad = False  # meant: only the base weights\n"
                "trainer = SFTTrainer(model=model)\n"
            ),
            after=(
                "from peft import get_peft_model\n"
                "model = get_peft_model(model, peft_config)\n"
                "trainer = SFTTrainer(model=model)\n"
            ),
            run_facts=_FROZEN,
        ),
        Example(  # frozen before get_peft_model: the adapters come after, trainable
            before=(
                "from peft import get_peft_model\n"
                "for p in model.parameters():\n"
                "    p.requires_grad_(False)\n"
                "model = get_peft_model(model, peft_config)\n"
            ),
        ),
        Example(  # a selective freeze: the script's choice
            before=(
                "from peft import get_peft_model\n"
                "model = get_peft_model(model, peft_config)\n"
                "for name, p in model.named_parameters():\n"
                "    if 'lora' not in name:\n"
                "        p.requires_grad = False\n"
            ),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        lm = self.rc.facts.get("lm") or {}
        if lm.get("params_trainable"):
            raise NotApplicable("the run's facts show trainable parameters")
        self.loops: set[cst.For] = set()
        for loop in find_loops(tree):
            if frozen_loop_variable(loop) is None or not isinstance(loop.iter, cst.Call) or \
                    not m.matches(loop.iter.func, m.Attribute(
                        value=m.Name(), attr=m.Name("parameters") | m.Name("named_parameters"))):
                continue
            func = loop.iter.func
            assert isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
            model = func.value.value
            line = self.program.line(loop)
            earlier = [t for t in self.program.resolve(model, loop)
                       if isinstance(t, cst.CSTNode) and 0 < self.program.line(t) < line]
            if not earlier:
                continue
            last = max(earlier, key=self.program.line)
            holder = self.program.parent(last)
            assign = self.program.parent(holder) if holder is not None else None
            if isinstance(assign, cst.Assign) and isinstance(assign.value, cst.Call) and \
                    self.is_qualified(assign.value.func, patterns.GET_PEFT_MODEL):
                self.loops.add(loop)
                self.changed(loop, f"removed the loop freezing every parameter of {model} "
                                   f"after {code(assign.value.func)}() (get_peft_model "
                                   "already freezes the base model)")

    def leave_For(self, original_node: cst.For, updated_node: cst.For
                  ) -> cst.For | cst.RemovalSentinel:
        if original_node in self.loops:
            return cst.RemoveFromParent()
        return updated_node


def find_loops(tree: cst.Module) -> list[cst.For]:
    """Every ``for`` loop of ``tree``."""
    return [node for node in m.findall(tree, m.For()) if isinstance(node, cst.For)]
