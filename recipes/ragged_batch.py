"""ragged-batch: ``Trainer`` has no tokenizer or padding collator, so batches are ragged.

Course (chapter 8): "Padding inside the Trainer is normally the default, but only if you
provide your tokenizer to the Trainer". Fix, chosen by the *target* environment's
transformers version: ``processing_class=tokenizer`` from 4.46 (the release that added
it), ``tokenizer=tokenizer`` before (``tokenizer=`` is a TypeError in 5.x); when the
version is unknown, or ``Trainer`` already has a non-padding ``data_collator``,
``data_collator=DataCollatorWithPadding(tokenizer)``, which every version accepts.
"""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from autofix.recipe import (
    TOKENIZER_PATTERN,
    TRAINER_PATTERN,
    Example,
    Recipe,
    append_keyword,
    keyword,
    replace_keyword,
)
from autofix.versions import at_least

_TOKENIZER_ARGS = ("processing_class", "tokenizer")
#: transformers 4.46.0 introduced ``Trainer(processing_class=...)``.
PROCESSING_CLASS_SINCE = "4.46.0"


class PadWithTokenizer(Recipe):
    id = "ragged-batch"
    category = "ragged-batch"
    title = "give Trainer the tokenizer so batches are padded"

    examples = (
        Example(
            before=(
                "from transformers import AutoTokenizer, Trainer\n"
                "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
                "trainer = Trainer(\n"
                "    model,\n"
                "    args,\n"
                "    train_dataset=train,  # tokenized\n"
                ")\n"
            ),
            after=(
                "from transformers import AutoTokenizer, Trainer\n"
                "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
                "trainer = Trainer(\n"
                "    model,\n"
                "    args,\n"
                "    train_dataset=train,  # tokenized\n"
                "    processing_class=tokenizer,\n"
                ")\n"
            ),
        ),
        Example(  # transformers before 4.46 wants tokenizer=
            before=(
                "import transformers\n"
                "tok = transformers.AutoTokenizer.from_pretrained(ckpt)\n"
                "t = transformers.Trainer(model, args, train_dataset=train)\n"
            ),
            after=(
                "import transformers\n"
                "tok = transformers.AutoTokenizer.from_pretrained(ckpt)\n"
                "t = transformers.Trainer(model, args, train_dataset=train, tokenizer=tok)\n"
            ),
            versions={"transformers": "4.40.2"},
        ),
        Example(  # a collator that does not pad is replaced by a padding one
            before=(
                "from transformers import AutoTokenizer as AT, Trainer, default_data_collator\n"
                "tok = AT.from_pretrained(ckpt)\n"
                "Trainer(model, args, data_collator=default_data_collator, processing_class=tok)\n"
            ),
            after=(
                "from transformers import AutoTokenizer as AT, DataCollatorWithPadding, Trainer,"
                " default_data_collator\n"
                "tok = AT.from_pretrained(ckpt)\n"
                "Trainer(model, args, data_collator=DataCollatorWithPadding(tok),"
                " processing_class=tok)\n"
            ),
        ),
        Example(  # version unknown: the collator works everywhere
            before=(
                "from transformers import AutoTokenizer, Trainer\n"
                "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
                "Trainer(model, args)\n"
            ),
            after=(
                "from transformers import AutoTokenizer, DataCollatorWithPadding, Trainer\n"
                "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
                "Trainer(model, args, data_collator=DataCollatorWithPadding(tokenizer))\n"
            ),
            versions={},
        ),
        Example(  # already padded by a collator
            before=(
                "from transformers import AutoTokenizer, Trainer, DataCollatorWithPadding\n"
                "tokenizer = AutoTokenizer.from_pretrained(ckpt)\n"
                "Trainer(model, args, data_collator=DataCollatorWithPadding(tokenizer))\n"
            ),
        ),
        Example(  # no tokenizer variable to give
            before="from transformers import Trainer\nTrainer(model, args)\n",
        ),
    )

    TRACK = {"tokenizer": TOKENIZER_PATTERN}
    nothing_to_do = "no Trainer(...) call to give a tokenizer"

    def _collator(self, tokenizer: str) -> cst.Call:
        AddImportsVisitor.add_needed_import(self.context, "transformers",
                                            "DataCollatorWithPadding")
        return cst.Call(func=cst.Name("DataCollatorWithPadding"),
                        args=[cst.Arg(cst.Name(tokenizer))])

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not self.is_qualified(original_node.func, TRAINER_PATTERN):
            return updated_node
        tokenizer = self.latest("tokenizer")
        if tokenizer is None:
            self.reason = "no tokenizer variable (X = AutoTokenizer.from_pretrained(...)) found"
            return updated_node
        collator = keyword(updated_node, "data_collator")
        if collator is not None:
            if "Padding" in cst.Module([]).code_for_node(collator.value):
                self.reason = "Trainer already has a padding data_collator"
                return updated_node
            self.changed(original_node, f"data_collator=DataCollatorWithPadding({tokenizer})")
            return replace_keyword(updated_node, "data_collator", self._collator(tokenizer))
        if any(keyword(updated_node, name) for name in _TOKENIZER_ARGS):
            self.reason = "Trainer already has the tokenizer and no data_collator"
            return updated_node
        version = self.rc.versions.get("transformers")
        if version is None:
            self.changed(original_node, f"data_collator=DataCollatorWithPadding({tokenizer})")
            return append_keyword(updated_node, "data_collator", self._collator(tokenizer))
        name = "processing_class" if at_least(version, PROCESSING_CLASS_SINCE) else "tokenizer"
        self.changed(original_node, f"{name}={tokenizer} (transformers {version})")
        return append_keyword(updated_node, name, cst.Name(tokenizer))

    def summary(self) -> str:
        return f"give Trainer the tokenizer so batches are padded ({', '.join(self.edits)})"
