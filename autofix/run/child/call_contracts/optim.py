"""The input contracts of optimizers: an optimizer takes its parameters once, as an
iterable it can read in full. A generator of parameters (``model.parameters()``) read
before (counting the parameters, a first optimizer) is empty by the time the optimizer
reads it (torch 2.13: ``optimizer got an empty parameter list``, in ``Optimizer.__init__``
after ``param_groups = list(params)``).
"""

from __future__ import annotations

import types

from .model import Breach, Call, Contract, Example


def _params_consumed(call: Call) -> Breach | None:
    params, groups = call.get("params"), call.get("param_groups")
    if not isinstance(params, types.GeneratorType) or groups != []:
        return None
    name = getattr(params, "__qualname__", "") or getattr(params, "__name__", "a generator")
    return Breach("items", f"a generator ({name}) already read to its end",
                  "every parameter to train, in an iterable read once by the optimizer",
                  params, {"generator": name})


OPTIM: tuple[Contract, ...] = (
    Contract(
        id="optimizer-params-read",
        category="params-generator-consumed",
        api="torch.optim.Optimizer",
        sites=(("torch/optim/optimizer.py", "__init__"),),
        argument="params",
        says="the parameters to train, read once by the optimizer",
        check=_params_consumed,
        repairs=("materialise-params",),
        title="an optimizer given a generator of parameters (model.parameters()) that the "
              "script had already read to its end (counted the parameters, built another "
              "optimizer)",
        hint="keep the parameters as a list where they are taken (params = "
             "list(model.parameters())), or call model.parameters() again for the "
             "optimizer",
        examples=(
            Example("import torch\nmodel = torch.nn.Linear(3, 2)\nparams = model.parameters()\n"
                    "print(sum(p.numel() for p in params))\n"
                    "opt = torch.optim.SGD(params, lr=0.1)\n"),
            Example("import torch\nmodel = torch.nn.Linear(3, 2)\n"
                    "params = list(model.parameters())\n"
                    "print(sum(p.numel() for p in params))\n"
                    "opt = torch.optim.SGD(params, lr=0.1)\n", breaks=False),
        ),
    ),
)
