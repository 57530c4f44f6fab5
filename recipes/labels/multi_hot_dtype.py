"""int-labels-on-multi-label-head: multi-hot label rows made as an integer array.

The same fault as :mod:`recipes.cast_multi_hot_float` (integer ``[B, C]`` rows reach a
multi-label head: ``result type Float can't be cast to the desired output type Long`` from
the BCE loss, measured on transformers 5.24), made outside ``Dataset.map``: the rows are an
array built with an integer ``dtype=`` (``np.zeros((n, C), dtype=np.int64)``,
``torch.tensor(rows, dtype=torch.long)``) and handed over as the label column
(``Dataset.from_dict({"labels": multi_hot.tolist()})``, ``ds.add_column("labels", ...)``)
or as a loss's ``labels=``. The fix makes the array float where it is made
(:func:`autofix.toolkit.operators.cast_at_source`), so every later use sees floats.
"""

from __future__ import annotations

import libcst as cst

from autofix.toolkit import Example
from autofix.toolkit.operators import cast_at_source
from autofix.toolkit.scope import PlannedEdits, string_value

LABEL_KEYS = ("labels", "label")


class MultiHotDtype(PlannedEdits):
    id = "multi-hot-dtype"
    category = "int-labels-on-multi-label-head"
    requires_words = (("dtype",), ("labels", "label"))
    title = "make the multi-hot label array float where it is built"
    nothing_to_do = ("no label column or labels= value followed back to an array built with "
                     "an integer dtype")
    restores = ("int-labels-on-multi-label-head",)

    examples = (
        Example(
            before=(
                "import numpy as np\n"
                "from datasets import Dataset\n"
                "multi_hot = np.zeros((len(tags), 3), dtype=np.int64)\n"
                "for i, t in enumerate(tags):\n"
                "    multi_hot[i, t] = 1\n"
                "ds = Dataset.from_dict({**enc, 'labels': multi_hot.tolist()})\n"
            ),
            after=(
                "import numpy as np\n"
                "from datasets import Dataset\n"
                "multi_hot = np.zeros((len(tags), 3), dtype=np.float32)\n"
                "for i, t in enumerate(tags):\n"
                "    multi_hot[i, t] = 1\n"
                "ds = Dataset.from_dict({**enc, 'labels': multi_hot.tolist()})\n"
            ),
        ),
        Example(  # a hand loop's labels= from a long tensor
            before=(
                "import torch\n"
                "y = torch.tensor(rows, dtype=torch.long)\n"
                "out = model(input_ids=x, labels=y)\n"
            ),
            after=(
                "import torch\n"
                "y = torch.tensor(rows, dtype=torch.float)\n"
                "out = model(input_ids=x, labels=y)\n"
            ),
        ),
        Example(  # add_column with a string dtype
            before=(
                "import numpy as np\n"
                "ds = ds.add_column('labels', list(np.array(rows, dtype='int64')))\n"
            ),
            after=(
                "import numpy as np\n"
                "ds = ds.add_column('labels', list(np.array(rows, dtype='float32')))\n"
            ),
        ),
        Example(  # floats already: nothing to change
            before=(
                "import numpy as np\n"
                "multi_hot = np.zeros((n, 3), dtype=np.float32)\n"
                "ds = Dataset.from_dict({'labels': multi_hot.tolist()})\n"
            ),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        for value in self._label_values():
            if cast_at_source(self, value, "make the multi-hot label array dtype={dtype} where "
                                           "it is built (integer rows break the multi-label "
                                           "loss)") is not None:
                return

    def _label_values(self) -> list[cst.BaseExpression]:
        """Where the script hands over label rows: a ``"labels"``/``"label"`` dict entry,
        ``add_column("labels", value)``, and ``labels=`` keywords."""
        out: list[cst.BaseExpression] = []
        for call in self.program.calls:
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value in LABEL_KEYS:
                    out.append(arg.value)
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "add_column" \
                    and len(call.args) >= 2 and string_value(call.args[0].value) in LABEL_KEYS:
                out.append(call.args[1].value)
            for arg in call.args:
                if isinstance(arg.value, cst.Dict):
                    out += [e.value for e in arg.value.elements
                            if isinstance(e, cst.DictElement)
                            and string_value(e.key) in LABEL_KEYS]
        return out
