"""loss-target-shape: class ids with a trailing axis of 1 (``(N, 1)`` where the loss takes
``(N,)``), dropped where the script adds it.

The child found ``cross_entropy``'s target of shape ``(N, 1)`` against scores ``(N, C)``
and confirmed it on the real arguments: the same call passes with
``target.squeeze(-1)`` (``0D or 1D target tensor expected, multi-target not supported``
on torch 2.13 is that contract's message; others say it differently). The recipe follows
the target back from the name that held it (the loop's ``y``, ``batch["labels"]``) to
where the axis is added and drops it there: a one-column table selected with
``df[["label"]]`` read as ``df["label"]``, ``reshape(-1, 1)`` as ``reshape(-1)``,
``unsqueeze(-1)``, ``x[:, None]``, ``np.expand_dims``, ``[[v] for v in ys]``, a row made as
``torch.tensor([label])``. Each candidate is run; the first whose run no longer breaks the
contract is kept. A trailing axis the script does not visibly add (labels saved as a
column) gets no edit: the advice names the change the child confirmed.
"""

from __future__ import annotations

from autofix.categories.breaches import CallBreach
from autofix.toolkit import Example
from autofix.toolkit.provenance import Provenance
from autofix.toolkit.scope import Option
from autofix.toolkit.source_ops import trailing_axis_options

from ._breach import BreachRecipe, breach_failure


def _breach(line: int, name: str = "y", key: str = "", function: str = "<module>"
            ) -> dict[str, object]:
    return {"contract": "class-target-shape", "category": "loss-target-shape",
            "api": "torch.nn.functional.cross_entropy", "argument": "target",
            "says": "class ids shaped like the scores without their class axis",
            "property": "shape", "observed": "class ids of shape (16, 1)",
            "expected": "shape (16,)", "trial": {"operator": "drop-trailing-axis",
                                                 "change": "target.squeeze(-1)"},
            "holders": [{"file": "script.py", "line": line, "function": function,
                         "name": name, "key": key}]}


_PANDAS = (
    "import pandas as pd\n"
    "import torch\n"
    "from torch.utils.data import DataLoader, TensorDataset\n"
    "def to_tensors(df):\n"
    "    y = torch.tensor(df[['label']].values, dtype=torch.long)\n"
    "    return TensorDataset(torch.tensor(df['x'].values), y)\n"
    "loader = DataLoader(to_tensors(frame), batch_size=16)\n"
    "for step, (x, y) in enumerate(loader):\n"
    "    loss = criterion(model(x), y)\n"
)
_RESHAPE = (
    "import numpy as np\n"
    "import torch\n"
    "from torch.utils.data import DataLoader, TensorDataset\n"
    "labels = np.array(rows).reshape(-1, 1)\n"
    "for batch in DataLoader(TensorDataset(x, torch.from_numpy(labels))):\n"
    "    loss = loss_fn(model(batch[0]), batch[1])\n"
)
_DATASET = (
    "import torch\n"
    "from torch.utils.data import DataLoader, Dataset\n"
    "class Rows(Dataset):\n"
    "    def __getitem__(self, i):\n"
    "        return {'x': self.x[i], 'labels': torch.tensor([self.y[i]])}\n"
    "for batch in DataLoader(Rows(), batch_size=8):\n"
    "    loss = loss_fn(model(batch['x']), batch['labels'])\n"
)


_COLLATE = (
    "import torch\n"
    "def make_collate(tokenizer):\n"
    "    def collate_fn(items):\n"
    "        texts, labels = zip(*items)\n"
    "        enc = tokenizer(list(texts), padding=True, return_tensors='pt')\n"
    "        return enc['input_ids'], torch.tensor(labels)[:, None]\n"
    "    return collate_fn\n"
)
#: the loop (in another module) held the batch; the collate function is this module's
_ELSEWHERE = {**_breach(18, "batch", "1", "train_step"),
              "holders": [{"file": "engine.py", "line": 18, "function": "train_step",
                           "name": "batch", "key": "1"}],
              "loaders": [{"file": "engine.py", "line": 26, "function": "fit", "name": "loader",
                           "kind": "loader", "collate": "script.py:3",
                           "getitem": "", "dataset": "data.Rows"}]}


class DropTrailingAxis(BreachRecipe):
    id = "drop-trailing-axis"
    category = "loss-target-shape"
    title = "make the class ids one axis where the script adds a trailing axis of 1"
    requires_imports = ("torch",)
    operators = ("drop-trailing-axis",)
    subject_from_change = True
    restores = ("loss-target-shape",)
    nothing_to_do = ("the class ids at the loss were not followed to where the script "
                     "makes them")

    examples = (
        Example(before=_PANDAS, after=_PANDAS.replace("df[['label']]", "df['label']"),
                failure=breach_failure("0D or 1D target tensor expected", _breach(9), 9)),
        Example(before=_RESHAPE, after=_RESHAPE.replace(".reshape(-1, 1)", ".reshape(-1)"),
                failure=breach_failure("0D or 1D target tensor expected",
                                       _breach(6, "batch", "1"), 6)),
        Example(before=_DATASET, after=_DATASET.replace("torch.tensor([self.y[i]])",
                                                        "torch.tensor(self.y[i])"),
                failure=breach_failure("0D or 1D target tensor expected",
                                       _breach(7, "batch", "labels"), 7)),
        Example(  # made in this module's collate_fn, used in another module's loop
            before=_COLLATE, after=_COLLATE.replace("torch.tensor(labels)[:, None]",
                                                    "torch.tensor(labels)"),
            failure=breach_failure("0D or 1D target tensor expected", _ELSEWHERE, 1)),
        Example(  # a token-level target: another operator's breach
            before=_PANDAS,
            failure=breach_failure("Expected target size", {
                **_breach(9), "trial": {"operator": "flatten-token-loss", "change": ""}}, 9)),
    )

    def candidates(self, breach: CallBreach, provenance: Provenance) -> list[Option]:
        found: list[Option] = []
        for _, origins in self.starts(breach, provenance):
            found += trailing_axis_options(self, origins)
        return found
