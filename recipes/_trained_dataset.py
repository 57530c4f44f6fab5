"""The dataset a script trains on, as the name its training call is given, for the recipes
that insert a statement after that dataset's last assignment (``string-labels``,
``labels-from-zero``; not a recipe itself: the registry skips modules whose name starts
with ``_``)."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Recipe, find, keyword
from autofix.toolkit.patterns import DATALOADER, TRAINER


def trained_dataset(recipe: Recipe, tree: cst.Module) -> cst.Name | None:
    """The first ``Trainer(train_dataset=<name>)`` or ``DataLoader(<name>)`` in ``tree``,
    as that ``<name>`` node (a subscript such as ``ds["train"]`` gives ``ds``); ``None``
    when no training call is given a name. Calls are matched by qualified name
    (``recipe.is_qualified``)."""
    for call in find(tree, m.Call()):
        assert isinstance(call, cst.Call)
        if recipe.is_qualified(call.func, TRAINER):
            arg = keyword(call, "train_dataset")
        elif recipe.is_qualified(call.func, DATALOADER):
            arg = call.args[0] if call.args else None
        else:
            continue
        base = arg.value if arg is not None else None
        while isinstance(base, cst.Subscript):
            base = base.value
        if isinstance(base, cst.Name):
            return base
    return None
