"""dataframe-to-trainer: a pandas DataFrame given to ``Trainer`` as a dataset.

Public report: huggingface/peft#1729 (``KeyError: <row number>`` from pandas while the
DataLoader fetches rows: ``df[i]`` looks up a column). Fix, as the maintainer advised
there: convert it, ``datasets.Dataset.from_pandas(df, preserve_index=False)``, at each
``train_dataset=``/``eval_dataset=`` of ``Trainer`` that is a plain variable of a script
that imports pandas.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.codemod.visitors import AddImportsVisitor

from autofix.toolkit import Example, Recipe, patterns, replace_keyword

_ROLES = ("train_dataset", "eval_dataset")


class DatasetFromPandas(Recipe):
    id = "dataset-from-pandas"
    category = "dataframe-to-trainer"
    requires_words = (("Trainer", "Seq2SeqTrainer"),)
    requires_imports = ("transformers",)
    title = "convert the pandas DataFrame with Dataset.from_pandas before Trainer"
    nothing_to_do = "no Trainer(train_dataset=<variable>) to convert"

    examples = (
        Example(
            before=(
                "import pandas as pd\n"
                "from transformers import Trainer\n"
                "df = pd.read_csv(path)\n"
                "trainer = Trainer(model=model, args=args, train_dataset=df)\n"
            ),
            after=('import pandas as pd\n'
                   'from datasets import Dataset\n'
                   'from transformers import Trainer\n'
                   '\n'
                   'df = pd.read_csv(path)\n'
                   'trainer = Trainer(\n'
                   '    model=model,\n'
                   '    args=args,\n'
                   '    train_dataset=Dataset.from_pandas(df, preserve_index=False),\n'
                   ')\n'),
        ),
        Example(  # no pandas in the script: the KeyError has another cause
            before=(
                "from transformers import Trainer\n"
                "trainer = Trainer(model=model, train_dataset=rows)\n"
            ),
        ),
        Example(  # already converted
            before=(
                "import pandas as pd\n"
                "from datasets import Dataset\n"
                "from transformers import Trainer\n"
                "trainer = Trainer(model=model, train_dataset=Dataset.from_pandas(df))\n"
            ),
        ),
    )

    def visit_Module(self, node: cst.Module) -> bool:
        pandas = any(isinstance(n, cst.Name | cst.Attribute) and
                     self.is_qualified(n, patterns.PANDAS_ANY)
                     for n in m.findall(node, m.Name() | m.Attribute()))
        if not pandas:
            self.reason = "the script does not use pandas"
        return pandas

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not self.is_qualified(original_node.func, patterns.TRAINER):
            return updated_node
        for arg in original_node.args:
            if arg.keyword is None or arg.keyword.value not in _ROLES \
                    or not isinstance(arg.value, cst.Name):
                continue
            AddImportsVisitor.add_needed_import(self.context, "datasets", "Dataset")
            value = cst.parse_expression(
                f"Dataset.from_pandas({arg.value.value}, preserve_index=False)")
            self.changed(original_node, f"{arg.keyword.value}=Dataset.from_pandas(...)")
            updated_node = replace_keyword(updated_node, arg.keyword.value, value)
        return updated_node
