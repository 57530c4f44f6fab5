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

from autofix.toolkit import Example, code, keyword
from autofix.toolkit.scope import PlannedEdits, append_kw, apply_tokenizer_plan, replace_kw
from autofix.toolkit.versions import PROCESSING_CLASS_SINCE, at_least

_TOKENIZER_ARGS = ("processing_class", "tokenizer")


class PadWithTokenizer(PlannedEdits):
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
            after=(  # the grown import line wrapped as isort wraps it
                "from transformers import (\n"
                "    AutoTokenizer as AT,\n"
                "    DataCollatorWithPadding,\n"
                "    Trainer,\n"
                "    default_data_collator,\n"
                ")\n"
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
        Example(  # the tokenizer is threaded in: new parameter, passed at the call site
            before=(
                "from transformers import AutoTokenizer, Trainer\n"
                "def load_tokenizer(cfg):\n"
                "    return AutoTokenizer.from_pretrained(cfg.model)\n"
                "def build(model, train):\n"
                "    return Trainer(model=model, train_dataset=train)\n"
                "def main():\n"
                "    tok = load_tokenizer(cfg)\n"
                "    build(model, data)\n"
            ),
            after=(
                "from transformers import AutoTokenizer, Trainer\n"
                "def load_tokenizer(cfg):\n"
                "    return AutoTokenizer.from_pretrained(cfg.model)\n"
                "def build(model, train, *, tokenizer=None):\n"
                "    return Trainer(model=model, train_dataset=train, processing_class=tokenizer)\n"
                "def main():\n"
                "    tok = load_tokenizer(cfg)\n"
                "    build(model, data, tokenizer=tok)\n"
            ),
        ),
        Example(  # a class keeping the tokenizer in self.tokenizer
            before=(
                "import transformers\n"
                "class Job:\n"
                "    def __init__(self, ckpt):\n"
                "        self.tokenizer = transformers.AutoTokenizer.from_pretrained(ckpt)\n"
                "    def train(self, model, ds):\n"
                "        return transformers.Trainer(model, train_dataset=ds)\n"
            ),
            after=('import transformers\n'
                   'class Job:\n'
                   '    def __init__(self, ckpt):\n'
                   '        self.tokenizer = transformers.AutoTokenizer.from_pretrained(ckpt)\n'
                   '    def train(self, model, ds):\n'
                   '        return transformers.Trainer(\n'
                   '            model,\n'
                   '            train_dataset=ds,\n'
                   '            processing_class=self.tokenizer,\n'
                   '        )\n'),
        ),
        Example(  # a training function taking the tokenizer as a keyword argument
            before=(
                "from transformers import AutoTokenizer, Trainer\n"
                "def train(model, ds, *, tokenizer=None):\n"
                "    Trainer(model, train_dataset=ds).train()\n"
                "train(model, ds, tokenizer=AutoTokenizer.from_pretrained(ckpt))\n"
            ),
            after=(
                "from transformers import AutoTokenizer, Trainer\n"
                "def train(model, ds, *, tokenizer=None):\n"
                "    Trainer(model, train_dataset=ds, processing_class=tokenizer).train()\n"
                "train(model, ds, tokenizer=AutoTokenizer.from_pretrained(ckpt))\n"
            ),
        ),
        Example(  # the tokenizer lives in main(), which never calls build(): no name to use
            before=(
                "from transformers import AutoTokenizer, Trainer\n"
                "def build(model):\n"
                "    return Trainer(model)\n"
                "def main():\n"
                "    tok = AutoTokenizer.from_pretrained(ckpt)\n"
            ),
        ),
    )

    nothing_to_do = "no Trainer(...) call to give a tokenizer"

    def _collator(self, tokenizer: cst.BaseExpression) -> cst.Call:
        AddImportsVisitor.add_needed_import(self.context, "transformers",
                                            "DataCollatorWithPadding")
        return cst.Call(func=cst.Name("DataCollatorWithPadding"), args=[cst.Arg(tokenizer)])

    def prepare(self, tree: cst.Module) -> None:
        for call in self.program.calls:
            if self.program.is_trainer_call(call):
                self._fix(call)

    def _fix(self, call: cst.Call) -> None:
        collator = keyword(call, "data_collator")
        positional = [a for a in call.args if a.keyword is None]
        if collator is None and len(positional) > 2 and not any(a.star for a in positional[:3]):
            collator = positional[2]  # Trainer(model, args, data_collator, ...)
            if "Padding" not in code(collator.value):
                self.reason = "Trainer's positional data_collator is not a padding one"
                return
        if collator is not None and "Padding" in code(collator.value):
            self.reason = "Trainer already has a padding data_collator"
            return
        if collator is None and any(keyword(call, name) for name in _TOKENIZER_ARGS):
            self.reason = "Trainer already has the tokenizer and no data_collator"
            return
        plan = self.program.tokenizer_at(call)
        if isinstance(plan, str):
            self.reason = plan
            return
        apply_tokenizer_plan(self, plan)
        tok, told = plan.expr, plan.describe()
        version = self.rc.versions.get("transformers")
        if collator is not None or version is None:
            edit = replace_kw if collator is not None else append_kw
            self.plan_edit(call, edit("data_collator", self._collator(tok)),
                           f"data_collator=DataCollatorWithPadding({told})")
            return
        name = "processing_class" if at_least(version, PROCESSING_CLASS_SINCE) else "tokenizer"
        self.plan_edit(call, append_kw(name, tok),
                       f"{name}={told} (transformers {version})")

    def summary(self) -> str:
        return f"give Trainer the tokenizer so batches are padded ({', '.join(self.edits)})"
