"""device-mismatch: a layer got its inputs on another device than its weights (the model
moved to the GPU, the batch left on the CPU: ``Expected all tensors to be on the same
device, but found at least two devices, cuda:0 and cpu!``).

The child compared the input's device with the weights' at the failing layer and
confirmed it: the same call passes with ``input.to(<the weights' device>)``. The recipe
moves the batch the loop takes to the model's device at the top of the loop's body, where
a reviewer expects it: every name the ``for`` target unpacks (``ids, y = ids.to(device),
y.to(device)``), or a dict batch (``batch = {k: v.to(device) for k, v in batch.items()}``),
with the script's own name for the device. Without such a name in scope no edit is made:
the advice names the change.
"""

from __future__ import annotations

from autofix.categories.breaches import CallBreach
from autofix.toolkit import Example
from autofix.toolkit.provenance import Provenance
from autofix.toolkit.scope import Option
from autofix.toolkit.source_ops import device_options

from ._breach import BreachRecipe, breach_failure


def _breach(line: int, name: str, key: str = "", function: str = "train") -> dict[str, object]:
    return {"contract": "layer-input-device", "category": "device-mismatch",
            "api": "torch.nn.Linear", "argument": "input",
            "says": "inputs on the device of the layer's weights", "property": "device",
            "observed": "inputs on cpu", "expected": "cuda:0, the device of the weights",
            "trial": {"operator": "move-to-device", "change": "input.to('cuda:0')"},
            "holders": [{"file": "script.py", "line": line, "function": function,
                         "name": name, "key": key}]}


_TUPLE = (
    "import torch\n"
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "def train(model, loader, opt):\n"
    "    for ids, y in loader:\n"
    "        loss = loss_fn(model(ids), y)\n"
)
_DICT = (
    "import torch\n"
    "DEVICE = 'cuda'\n"
    "model.to(DEVICE)\n"
    "for batch in loader:\n"
    "    out = model(**batch)\n"
    "    out.loss.backward()\n"
)


class MoveToDevice(BreachRecipe):
    id = "move-to-device"
    category = "device-mismatch"
    title = "move each batch to the model's device at the top of the loop"
    requires_imports = ("torch",)
    operators = ("move-to-device",)
    subject_from_change = True
    restores = ("device-mismatch",)
    nothing_to_do = "the batch was not found as a name a loop takes"

    examples = (
        Example(before=_TUPLE, after=_TUPLE.replace(
                    "    for ids, y in loader:\n",
                    "    for ids, y in loader:\n        ids, y = ids.to(device), y.to(device)\n"),
                failure=breach_failure("Expected all tensors to be on the same device",
                                       _breach(5, "ids"), 5)),
        Example(before=_DICT, after=_DICT.replace(
                    "for batch in loader:\n",
                    "for batch in loader:\n"
                    "    batch = {k: v.to(DEVICE) for k, v in batch.items()}\n"),
                failure=breach_failure("Expected all tensors to be on the same device",
                                       _breach(5, "batch", "input_ids", "<module>"), 5)),
        Example(  # no name for the device in scope: advice only
            before=_TUPLE.replace("device = torch.device('cuda' if torch.cuda.is_available() "
                                  "else 'cpu')\n", ""),
            failure=breach_failure("Expected all tensors to be on the same device",
                                   _breach(4, "ids"), 4)),
    )

    def candidates(self, breach: CallBreach, provenance: Provenance) -> list[Option]:
        found: list[Option] = []
        for holder in breach.holders:
            if not holder.is_in(self.rc.script):
                continue
            use = provenance.name_read(holder.name, holder.line, holder.key)
            if use is not None:
                found += device_options(self, use)
            if found:
                break
        return found
