"""batch-norm-single-row: a batch norm layer in training got a batch of one row, the
last batch of a loader whose dataset leaves a remainder of 1 (241 rows in batches of 16).

torch's ``batch_norm`` needs more than one value per channel in training (``Expected
more than 1 value per channel when training``); the child measured the batch's rows at
the failing call, confirmed the contract (the same call passes on a batch of 2 rows) and
found the loaders of the user's frames whose last batch has that many rows. The recipe
follows the loader's name back to the ``DataLoader(...)`` call that builds it and sets
``drop_last=True`` there, as PyTorch's documentation advises for a dataset size not
divisible by the batch size; a loader built with ``drop_last`` already is left alone.
"""

from __future__ import annotations

from autofix.categories.breaches import CallBreach
from autofix.toolkit import Example
from autofix.toolkit.provenance import Provenance
from autofix.toolkit.scope import Option
from autofix.toolkit.source_ops import loader_options, trainer_options

from ._breach import BreachRecipe, breach_failure


def _breach(line: int, name: str, function: str = "main", rows: int = 241,
            kind: str = "loader") -> dict[str, object]:
    return {"contract": "batch-norm-rows", "category": "batch-norm-single-row",
            "api": "torch.nn.functional.batch_norm", "argument": "input",
            "says": "more than one value per channel in training", "property": "rows",
            "observed": "a batch of 1 row", "expected": "a batch of 2 rows or more",
            "facts": {"rows": 1}, "trial": {"operator": "drop-last-batch", "change": ""},
            "loaders": [{"file": "script.py", "line": line, "function": function,
                         "name": name, "batch_size": 16, "rows": rows, "drop_last": False,
                         "last_batch": rows % 16, "kind": kind}]}


_MAIN = (
    "import torch\n"
    "from torch.utils.data import DataLoader\n"
    "def main():\n"
    "    train_dl = DataLoader(rows, batch_size=16, shuffle=True)\n"
    "    for ids, y in train_dl:\n"
    "        loss = loss_fn(model(ids), y)\n"
)
_TRAINER = (
    "from transformers import Trainer, TrainingArguments\n"
    "args = TrainingArguments(output_dir='out')\n"
    "trainer = Trainer(model=MLP(), args=args, train_dataset=rows)\n"
    "trainer.train()\n"
)
_HELPER = (
    "from torch.utils.data import DataLoader\n"
    "def make_loaders(train, val, bs):\n"
    "    return DataLoader(train, bs, True), DataLoader(val, bs)\n"
    "class Engine:\n"
    "    def __init__(self, loaders):\n"
    "        self.train_loader, self.val_loader = loaders\n"
    "    def fit(self):\n"
    "        for batch in self.train_loader:\n"
    "            self.step(batch)\n"
    "Engine(make_loaders(a, b, 16)).fit()\n"
)


class DropLastBatch(BreachRecipe):
    id = "drop-last-batch"
    category = "batch-norm-single-row"
    title = "drop the last, one-row batch of the training loader (drop_last=True)"
    requires_imports = ("torch", "transformers")
    operators = ("drop-last-batch",)
    restores = ("batch-norm-single-row",)
    nothing_to_do = "the loader that made the one-row batch was not found in the script"

    examples = (
        Example(before=_MAIN, after=_MAIN.replace("shuffle=True)",
                                                  "shuffle=True, drop_last=True)"),
                failure=breach_failure("Expected more than 1 value per channel",
                                       _breach(6, "train_dl"), 6)),
        Example(before=_HELPER, after=_HELPER.replace(
                    "DataLoader(train, bs, True)", "DataLoader(train, bs, True, drop_last=True)"),
                failure=breach_failure("Expected more than 1 value per channel",
                                       _breach(9, "self.train_loader", "fit"), 9)),
        Example(before=_TRAINER, after=_TRAINER.replace(
                    "output_dir='out')", "output_dir='out', dataloader_drop_last=True)"),
                failure=breach_failure("Expected more than 1 value per channel",
                                       _breach(4, "trainer", "<module>", kind="trainer"), 4)),
        Example(  # the loader leaves no single row: not this loader
            before=_MAIN,
            failure=breach_failure("Expected more than 1 value per channel",
                                   _breach(6, "train_dl", rows=240), 6)),
    )

    def candidates(self, breach: CallBreach, provenance: Provenance) -> list[Option]:
        rows = breach.facts.get("rows")
        found: list[Option] = []
        for loader in breach.loaders:
            if loader.drop_last or loader.last_batch != rows \
                    or not loader.holder().is_in(self.rc.script):
                continue
            expr = provenance.name_read(loader.name, loader.line)
            if expr is None:
                continue
            found += trainer_options(self, provenance, expr) if loader.kind == "trainer" \
                else loader_options(self, provenance, expr)
        return found
