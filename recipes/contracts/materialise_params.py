"""params-generator-consumed: an optimizer given ``model.parameters()`` (a generator) that
the script had already read to its end (``params = model.parameters()``, counted with
``sum(p.numel() for p in params)``, then ``Adam(params)``: ``optimizer got an empty
parameter list``).

The child found the optimizer's ``params`` a generator with nothing left in it while the
model holds parameters. The recipe keeps the parameters as a list where the generator is
made (``params = list(model.parameters())``), so every reader gets all of them.
"""

from __future__ import annotations

from autofix.categories.breaches import CallBreach
from autofix.toolkit import Example
from autofix.toolkit.provenance import Provenance
from autofix.toolkit.scope import Option
from autofix.toolkit.source_ops import list_options

from ._breach import BreachRecipe, breach_failure

_COUNTED = (
    "import torch\n"
    "def make_optimizer(model, lr):\n"
    "    params = model.parameters()\n"
    "    print(sum(p.numel() for p in params))\n"
    "    return torch.optim.Adam(params, lr=lr)\n"
)
_BREACH = {"contract": "optimizer-params-read", "category": "params-generator-consumed",
           "api": "torch.optim.Optimizer", "argument": "params",
           "says": "the parameters to train, read once by the optimizer", "property": "items",
           "observed": "a generator already read to its end", "expected": "every parameter",
           "trial": {}, "repairs": ["materialise-params"],
           "holders": [{"file": "script.py", "line": 5, "function": "make_optimizer",
                        "name": "params", "key": ""}]}


class MaterialiseParams(BreachRecipe):
    id = "materialise-params"
    category = "params-generator-consumed"
    title = "keep the model's parameters as a list where they are taken, for every reader"
    requires_imports = ("torch",)
    operators = ("materialise-params",)
    subject_from_change = True
    restores = ("params-generator-consumed",)
    nothing_to_do = "the optimizer's parameters were not followed to a parameters() call"

    examples = (
        Example(before=_COUNTED, after=_COUNTED.replace("params = model.parameters()",
                                                        "params = list(model.parameters())"),
                failure=breach_failure("optimizer got an empty parameter list", _BREACH, 5)),
        Example(before=_COUNTED.replace("params = model.parameters()",
                                        "params = list(model.parameters())"),
                failure=breach_failure("optimizer got an empty parameter list", _BREACH, 5)),
    )

    def candidates(self, breach: CallBreach, provenance: Provenance) -> list[Option]:
        return list_options(self, [o for _, chain in self.starts(breach, provenance)
                                   for o in chain])
