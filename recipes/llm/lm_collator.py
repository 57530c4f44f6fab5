"""lm-collator: a causal LM trained on batches that carry no labels.

Public reports: philschmid/sagemaker-huggingface-llama-2-samples#22, unslothai/unsloth#455.
A causal language model computes its loss from ``labels``; ``DataCollatorWithPadding``
(the classifier recipe, and ``Trainer``'s default collator when it is given a tokenizer)
pads ``input_ids`` and makes none, so the model returns no loss: "The model did not return
a loss from the inputs, only the following keys: logits" in ``Trainer``, "'NoneType' object
has no attribute 'backward'" in a hand loop. The collator of the course's chapter 7
("Training a causal language model") is ``DataCollatorForLanguageModeling(tokenizer,
mlm=False)``: it pads and copies ``input_ids`` to ``labels`` with -100 on the padding (the
model shifts them itself).

The ``DataCollatorWithPadding(...)`` call that reaches ``Trainer(data_collator=...)`` or
``DataLoader(collate_fn=...)`` (directly or through the name it is assigned to) becomes
that collator, with the same tokenizer (``pad_to_multiple_of`` and ``return_tensors`` kept);
a ``Trainer`` without a collator but with a tokenizer gets one. ``SFTTrainer`` is left to
``sft-default-collator`` (TRL builds its own collator).
"""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from autofix.toolkit import Example, code, keyword, patterns
from autofix.toolkit.scope import PlannedEdits, append_kw, replace_with
from autofix.toolkit.values import Values

NEW = "DataCollatorForLanguageModeling"
#: DataCollatorWithPadding's arguments DataCollatorForLanguageModeling also takes.
KEPT = ("pad_to_multiple_of", "return_tensors")


def lm_collator(call: cst.Call | None, tokenizer: cst.BaseExpression,
                func: cst.BaseExpression) -> cst.Call:
    """``DataCollatorForLanguageModeling(<tokenizer>, mlm=False, ...)``, named like
    ``func`` (``Name`` or ``transformers.X``), keeping ``call``'s :data:`KEPT` arguments."""
    if isinstance(func, cst.Attribute):
        new_func: cst.BaseExpression = func.with_changes(attr=cst.Name(NEW))
    else:
        new_func = cst.Name(NEW)
    kept = [a for a in (call.args if call is not None else ())
            if a.keyword is not None and a.keyword.value in KEPT]
    text = ", ".join([code(tokenizer), "mlm=False", *(code(a).rstrip(", ") for a in kept)])
    return cst.parse_expression(f"{code(new_func)}({text})")  # type: ignore[return-value]


def tokenizer_arg(call: cst.Call) -> cst.BaseExpression | None:
    """The tokenizer given to a collator (first positional argument or ``tokenizer=``)."""
    arg = keyword(call, "tokenizer")
    if arg is not None:
        return arg.value
    first = next((a for a in call.args if a.keyword is None and not a.star), None)
    return first.value if first is not None else None


def fed_collators(values: Values, pattern: str) -> list[cst.Call]:
    """The calls matching ``pattern`` (a collator class) that reach a ``Trainer``'s
    ``data_collator=`` or a ``DataLoader``'s ``collate_fn=``, directly or through the name
    they are assigned to (followed by the recipe run's value service, ``values``); each
    once, in source order of their use."""
    recipe = values.recipe
    found: list[cst.Call] = []
    for call in values.program.calls:
        if recipe.is_qualified(call.func, patterns.TRAINER):
            arg = keyword(call, "data_collator")
        elif recipe.is_qualified(call.func, patterns.DATALOADER):
            arg = keyword(call, "collate_fn")
        else:
            continue
        for value in values.origins(arg.value) if arg is not None else ():
            if isinstance(value, cst.Call) and value not in found \
                    and recipe.is_qualified(value.func, pattern):
                found.append(value)
    return found


class CausalLmCollator(PlannedEdits):
    id = "lm-collator"
    category = "causal-lm-without-labels"
    title = "batch the causal LM with DataCollatorForLanguageModeling(mlm=False)"
    requires_imports = ("transformers",)
    nothing_to_do = ("no DataCollatorWithPadding reaching Trainer(data_collator=) or "
                     "DataLoader(collate_fn=), and no Trainer without a collator")

    examples = (
        Example(
            before=(
                "from transformers import DataCollatorWithPadding, Trainer\n"
                "collator = DataCollatorWithPadding(tokenizer=tokenizer)\n"
                "trainer = Trainer(model=model, args=args, train_dataset=ds, "
                "data_collator=collator)\n"
            ),
            after=(
                "from transformers import DataCollatorForLanguageModeling, Trainer\n"
                "collator = DataCollatorForLanguageModeling(tokenizer, mlm=False)\n"
                "trainer = Trainer(model=model, args=args, train_dataset=ds, "
                "data_collator=collator)\n"
            ),
        ),
        Example(  # a hand loop
            before=(
                "import transformers\n"
                "from torch.utils.data import DataLoader\n"
                "pad = transformers.DataCollatorWithPadding(tok)\n"
                "loader = DataLoader(ds, batch_size=8, collate_fn=pad)\n"
            ),
            after=(
                "import transformers\n"
                "from torch.utils.data import DataLoader\n"
                "pad = transformers.DataCollatorForLanguageModeling(tok, mlm=False)\n"
                "loader = DataLoader(ds, batch_size=8, collate_fn=pad)\n"
            ),
        ),
        Example(  # Trainer's default collator is DataCollatorWithPadding
            before=(
                "from transformers import Trainer\n"
                "trainer = Trainer(model=model, processing_class=tok)\n"
            ),
            after=(
                "from transformers import DataCollatorForLanguageModeling, Trainer\n"
                "trainer = Trainer(\n"
                "    model=model,\n"
                "    processing_class=tok,\n"
                "    data_collator=DataCollatorForLanguageModeling(tok, mlm=False),\n"
                ")\n"
            ),
        ),
        Example(  # SFTTrainer: its own collator is the fix (sft-default-collator)
            before=(
                "from transformers import DataCollatorWithPadding\n"
                "from trl import SFTTrainer\n"
                "trainer = SFTTrainer(model=m, data_collator=DataCollatorWithPadding(tok))\n"
            ),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        for call in self.program.calls:
            if self.is_qualified(call.func, patterns.TRAINER) \
                    and keyword(call, "data_collator") is None:
                self._default_collator(call)
        for value in fed_collators(Values(self), patterns.WITH_PADDING_COLLATOR):
            tokenizer = tokenizer_arg(value)
            if tokenizer is None:
                self.reason = f"{code(value)} names no tokenizer"
                continue
            new = lm_collator(value, tokenizer, value.func)
            self._imports(value.func)
            self.plan_edit(value, replace_with(new), code(new))

    def _default_collator(self, call: cst.Call) -> None:
        """A Trainer with a tokenizer and no collator pads with DataCollatorWithPadding."""
        given = keyword(call, "processing_class") or keyword(call, "tokenizer")
        if given is None:
            return
        func = cst.Name(NEW)
        new = lm_collator(None, given.value, func)
        self._imports(func)
        self.plan_edit(call, append_kw("data_collator", new), f"data_collator={code(new)}")

    def _imports(self, func: cst.BaseExpression) -> None:
        if isinstance(func, cst.Name):
            AddImportsVisitor.add_needed_import(self.context, "transformers", NEW)
            RemoveImportsVisitor.remove_unused_import(self.context, "transformers",
                                                      "DataCollatorWithPadding")
