"""input-dtype-mismatch (and float-token-ids, class-ids-as-floats,
int-labels-on-multi-label-head): a value of another element type than the call takes, made
in that type where the script makes it.

The child found the failing call's argument of the wrong dtype (float64 features from
numpy into a float32 ``nn.Linear``, token ids as float64 from ``np.zeros`` into an
embedding, class ids as floats into ``cross_entropy``) and confirmed the contract on the
real arguments: the call passes once the argument is cast (``input.float()``,
``input.long()``). The recipe follows the argument back from the name that held it to where
the array or tensor is made and makes it there in the type the call needs: ``dtype=`` of
a numpy or torch maker (``np.zeros((n, L))`` -> ``np.zeros((n, L), dtype=np.int64)``), a
random draw ``.astype(np.float32)``, a legacy constructor (``torch.FloatTensor`` ->
``torch.LongTensor``), a cast method (``.float()`` -> ``.long()``), ``.astype(...)``; else
a cast where numpy becomes torch (``torch.from_numpy(x).float()``), else at the call. Each
candidate is run; the first whose run no longer breaks the contract is kept.
"""

from __future__ import annotations

from autofix.categories.breaches import CallBreach
from autofix.toolkit import Example
from autofix.toolkit.provenance import Provenance
from autofix.toolkit.scope import Option
from autofix.toolkit.source_ops import cast_options

from ._breach import BreachRecipe, breach_failure

#: The operator of each breach and the element type it makes.
TARGETS = {"cast-int64": "int64", "cast-float32": "float32", "cast-bool": "bool"}


def _breach(line: int, operator: str, name: str, key: str = "",
            category: str = "input-dtype-mismatch") -> dict[str, object]:
    return {"contract": "layer-input-dtype", "category": category, "api": "torch.nn.Linear",
            "argument": "input", "says": "inputs of the layer's weights' dtype",
            "property": "dtype", "observed": "torch.float64 inputs",
            "expected": "torch.float32", "trial": {"operator": operator, "change": ""},
            "holders": [{"file": "script.py", "line": line, "function": "<module>",
                         "name": name, "key": key}]}


_IDS = (
    "import numpy as np\n"
    "import torch\n"
    "from torch.utils.data import DataLoader, TensorDataset\n"
    "def pad(rows):\n"
    "    ids = np.zeros((len(rows), 32))\n"
    "    return ids\n"
    "data = TensorDataset(torch.from_numpy(pad(rows)), labels)\n"
    "for ids, y in DataLoader(data, batch_size=8):\n"
    "    out = model(input_ids=ids, labels=y)\n"
)
_FEATURES = (
    "import numpy as np\n"
    "import torch\n"
    "X = np.random.randn(100, 4)\n"
    "xb = torch.from_numpy(X[:16])\n"
    "pred = net(xb)\n"
)
_LABELS = (
    "import torch\n"
    "y = torch.FloatTensor(labels)\n"
    "for xb, yb in zip(batches, y.split(8)):\n"
    "    loss = loss_fn(net(xb), yb)\n"
)


_MASK = (
    "import torch\n"
    "def pool(scores, mask):\n"
    "    # mask: 1 on tokens, 0 on padding\n"
    "    return scores.masked_fill((1 - mask), float('-inf')).softmax(-1)\n"
)


class CastWhereMade(BreachRecipe):
    id = "cast-where-made"
    category = "input-dtype-mismatch"
    also_fixes = ("float-token-ids", "class-ids-as-floats", "int-labels-on-multi-label-head",
                  "mask-not-bool")
    title = "make the value in the element type the call takes, where the script makes it"
    requires_imports = ("torch",)
    operators = tuple(TARGETS)
    subject_from_change = True
    restores = ("input-dtype-mismatch", "float-token-ids", "class-ids-as-floats",
                "int-labels-on-multi-label-head", "mask-not-bool")
    nothing_to_do = "the argument was not followed to where the script makes it"

    examples = (
        Example(before=_IDS, after=_IDS.replace("np.zeros((len(rows), 32))",
                                                "np.zeros((len(rows), 32), dtype=np.int64)"),
                failure=breach_failure("Expected tensor for argument #1 'indices'",
                                       _breach(9, "cast-int64", "ids",
                                               category="float-token-ids"), 9)),
        Example(before=_FEATURES, after=_FEATURES.replace(
                    "np.random.randn(100, 4)", "np.random.randn(100, 4).astype(np.float32)"),
                failure=breach_failure("mat1 and mat2 must have the same dtype",
                                       _breach(5, "cast-float32", "xb"), 5)),
        Example(  # the second candidate: where numpy becomes torch
            before=_FEATURES, choice=1,
            after=_FEATURES.replace("torch.from_numpy(X[:16])", "torch.from_numpy(X[:16])"
                                                                ".float()"),
            failure=breach_failure("mat1 and mat2 must have the same dtype",
                                   _breach(5, "cast-float32", "xb"), 5)),
        Example(before=_LABELS, after=_LABELS.replace("FloatTensor", "LongTensor"),
                failure=breach_failure("expected scalar type Long but found Float",
                                       _breach(4, "cast-int64", "yb",
                                               category="class-ids-as-floats"), 4)),
        Example(  # a 0/1 mask where masked_fill takes bool: cast where the call writes it
            before=_MASK, after=_MASK.replace("(1 - mask)", "(1 - mask).bool()"),
            failure=breach_failure("masked_fill_ only supports boolean masks", {
                **_breach(4, "cast-bool", "mask", category="mask-not-bool"),
                "at": {"file": "script.py", "line": 4, "column": 31, "end_line": 4,
                       "end_column": 39}}, 4)),
        Example(  # a breach of another operator
            before=_FEATURES,
            failure=breach_failure("0D or 1D target tensor expected",
                                   _breach(5, "drop-trailing-axis", "xb"), 5)),
    )

    def candidates(self, breach: CallBreach, provenance: Provenance) -> list[Option]:
        target = TARGETS[breach.operator or next(iter(breach.repairs), "")]
        return cast_options(self, self.starts(breach, provenance), target)
