"""api-drift: ``Trainer(tokenizer=...)`` <-> ``Trainer(processing_class=...)``.

transformers 4.46.0 renamed the argument; 5.x rejects ``tokenizer=`` ("unexpected keyword
argument 'tokenizer'"), releases before 4.46 reject ``processing_class=``. The name is
chosen by the target environment's version.
"""

from __future__ import annotations

import libcst as cst

from autofix.recipe import TRAINER_PATTERN, Example, NotApplicable, Recipe
from autofix.versions import at_least
from recipes.ragged_batch import PROCESSING_CLASS_SINCE

_NAMES = ("tokenizer", "processing_class")


class RenameTokenizerArgument(Recipe):
    id = "drift-processing-class"
    category = "api-drift"
    title = "use the tokenizer argument name of the installed transformers Trainer"

    examples = (
        Example(
            before=("from transformers import Trainer\n"
                    "trainer = Trainer(model, args, tokenizer=tokenizer)\n"),
            after=("from transformers import Trainer\n"
                   "trainer = Trainer(model, args, processing_class=tokenizer)\n"),
            evidence="TypeError: Trainer.__init__() got an unexpected keyword argument "
                     "'tokenizer'",
        ),
        Example(  # an old install wants tokenizer=
            before=("from transformers import Trainer as T\n"
                    "T(model, args, processing_class=tok)\n"),
            after=("from transformers import Trainer as T\n"
                   "T(model, args, tokenizer=tok)\n"),
            versions={"transformers": "4.44.0"},
            evidence="TypeError: __init__() got an unexpected keyword argument "
                     "'processing_class'",
        ),
        Example(  # already right for 5.x
            before=("from transformers import Trainer\n"
                    "Trainer(model, args, processing_class=tok)\n"),
            evidence="TypeError: __init__() got an unexpected keyword argument 'tokenizer'",
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        if not any(f"argument '{name}'" in self.rc.diagnosis.evidence for name in _NAMES):
            raise NotApplicable("the error is not about Trainer's tokenizer argument")
        version = self.rc.versions.get("transformers", "")
        self.wanted = "processing_class" if at_least(version, PROCESSING_CLASS_SINCE) \
            else "tokenizer"
        new = super().transform_module_impl(tree)
        if not self.edits:
            raise NotApplicable(f"Trainer already uses {self.wanted}=")
        return new

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not self.is_qualified(original_node.func, TRAINER_PATTERN):
            return updated_node
        args = []
        for arg in updated_node.args:
            if arg.keyword is not None and arg.keyword.value in _NAMES \
                    and arg.keyword.value != self.wanted:
                self.changed(original_node, f"{arg.keyword.value}= -> {self.wanted}=")
                arg = arg.with_changes(keyword=cst.Name(self.wanted))
            args.append(arg)
        return updated_node.with_changes(args=args)

    def summary(self) -> str:
        version = self.rc.versions.get("transformers", "unknown")
        return f"Trainer {self.edits[0]} (transformers {version})"
