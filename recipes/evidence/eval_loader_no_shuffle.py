"""eval-loader-no-shuffle: an evaluation loader that shuffles, scored against labels kept
in the dataset's order.

A ``DataLoader(..., shuffle=True)`` draws a new order each epoch; an evaluation loop that
collects the model's predictions over it without reading the batches' labels, then
compares them with the dataset's labels (a tensor, an array, a list made before the loop),
pairs each prediction with another row's label, and the accuracy falls to chance
(the ``eval-loader-shuffled`` source finding, :func:`autofix.toolkit.source_findings.
shuffled_evaluations`). The fix sets ``shuffle=False`` where that loader is built, reached
through the loop's name, a function's parameter filled at its call sites, or ``self.x``
(the value service, :mod:`autofix.toolkit.values`). It never breaks a script: evaluation
does not depend on the order of its batches, and a loader the training loop also iterates
is never one of these (that loop calls ``backward()``).
"""

from __future__ import annotations

import libcst as cst

from autofix.toolkit import Example, NotApplicable
from autofix.toolkit.patterns import DATALOADER
from autofix.toolkit.scope import PlannedEdits
from autofix.toolkit.source_findings import shuffled_evaluations
from autofix.toolkit.values import CallOwner, Values

_HEAD = "import torch\nfrom torch.utils.data import DataLoader\n"


class EvalLoaderNoShuffle(PlannedEdits):
    id = "eval-loader-no-shuffle"
    category = "eval-loader-shuffled"
    title = "build the evaluation DataLoader with shuffle=False (its predictions are " \
            "compared with labels in the dataset's order)"
    requires_words = (("shuffle",), ("DataLoader",))
    nothing_to_do = "no evaluation loop over a DataLoader built with shuffle=True that " \
                    "leaves the batches' labels unread"

    examples = (
        Example(  # the loop's loader by name; predictions compared with stored labels
            before=_HEAD + "test_loader = DataLoader(test_set, batch_size=32, shuffle=True)\n"
                           "preds = torch.cat([model(xb).argmax(1) for xb, _ in test_loader])\n"
                           "print((preds == test_set.tensors[1]).float().mean())\n",
            after=_HEAD + "test_loader = DataLoader(test_set, batch_size=32, shuffle=False)\n"
                          "preds = torch.cat([model(xb).argmax(1) for xb, _ in test_loader])\n"
                          "print((preds == test_set.tensors[1]).float().mean())\n",
        ),
        Example(  # a predict() helper given the loader: reached through its call site
            before=_HEAD + "def predict(model, loader):\n    out = []\n"
                           "    for (xb,) in loader:\n        out.append(model(xb))\n"
                           "    return out\n\n\n"
                           "predict(model, DataLoader(TensorDataset(x), shuffle=True))\n",
            after=_HEAD + "def predict(model, loader):\n    out = []\n"
                          "    for (xb,) in loader:\n        out.append(model(xb))\n"
                          "    return out\n\n\n"
                          "predict(model, DataLoader(TensorDataset(x), shuffle=False))\n",
        ),
        Example(  # labels taken from the same batches: the order does not matter
            before=_HEAD + "loader = DataLoader(data, shuffle=True)\npreds, labels = [], []\n"
                           "for xb, yb in loader:\n    preds.append(model(xb))\n"
                           "    labels.append(yb)\n",
        ),
        Example(  # the training loop's loader shuffles, as it should
            before=_HEAD + "loader = DataLoader(data, shuffle=True)\nlosses = []\n"
                           "for xb, _ in loader:\n    loss = model(xb).sum()\n"
                           "    loss.backward()\n    optimizer.step()\n"
                           "    losses.append(loss.item())\n",
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        values = Values(self)
        for found in shuffled_evaluations(self):
            for call in found.constructions:
                if not self.is_qualified(call.func, DATALOADER):
                    continue
                CallOwner(values, call).set(
                    "shuffle", False, f"the evaluation loop at line {found.line} compares "
                                      "its predictions with labels in the dataset's order")
        if not self.edits:
            raise NotApplicable(self.nothing_to_do)
