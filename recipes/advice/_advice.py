"""The shape of the recipes that apply a library's own advice (the advice family,
``autofix/categories/catalogue/advice.py``) to the argument it names, where its value is
defined: the ``TrainingArguments`` / TRL config / ``Trainer`` call, or the constant,
dataclass field default, argparse default, config-dict entry or parameter that feeds it,
or the ``dict`` given as ``TrainingArguments(**hp)``, each read and written through the
value-source service (:mod:`autofix.toolkit.values`: :meth:`AdviceRecipe.the_args` is
the :class:`~autofix.toolkit.values.CallOwner` of the failing arguments). Not a recipe
itself (the registry skips modules whose name starts with ``_``).

A recipe of the family says which advice it makes (:meth:`AdviceRecipe.handles`, read on
the parsed message; the inventory ``benchmarks/inventory_advice.py`` asks it too), then
plans its edits in :meth:`AdviceRecipe.make`. It chooses between the message's
alternatives from what the script has, and never invents a value the library does not
give: when the value cannot be derived from the script's own settings it declines and its
reason says what to set.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import libcst as cst
import libcst.matchers as m

from autofix.categories.advice import Advice, parse_advice
from autofix.toolkit import NotApplicable, argument, keyword, patterns
from autofix.toolkit.scope import PlannedEdits, map_receiver, string_value
from autofix.toolkit.values import CallOwner, Values

#: Splits that hold evaluation data, in the order a script's own naming is preferred
#: (``datasets``' ``load_dataset`` names, the course's ``validation``; ``test`` last: it is
#: the only held-out split of many datasets, e.g. ``imdb``).
EVAL_SPLITS = ("validation", "valid", "val", "dev", "eval", "evaluation", "test")
#: Dataset methods that keep the split they are called on (``ds["train"].select(...)``).
_SAME_SPLIT = ("select", "shuffle", "filter", "map", "take", "skip", "remove_columns",
               "rename_column", "rename_columns", "with_format", "set_format", "cast",
               "cast_column", "sort", "flatten_indices", "class_encode_column")


def flat(advice: Sequence[Advice]) -> list[Advice]:
    """Every advice, the alternatives of an ``either`` one by one."""
    out: list[Advice] = []
    for a in advice:
        out += flat(a.alternatives) if a.kind == "either" else [a]
    return out


def message_text(evidence: str, message: str = "") -> str:
    """The library's message from a diagnosis: its whole ``message`` when known, else the
    ``Type: message`` evidence line without its type (a ``KeyError``'s quotes taken off)."""
    text = message or re.sub(r"^\w+(?:Error|Exception|Warning)?: ", "", evidence.strip())
    if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"" and \
            (evidence.startswith("KeyError") or not message):
        text = text[1:-1]
    return text


class AdviceRecipe(PlannedEdits):
    """A recipe that makes the change a library's message names."""

    abstract = True
    requires_imports = ("transformers", "trl")

    @classmethod
    def handles(cls, advice: Sequence[Advice], message: str) -> bool:
        """True when this recipe makes the change ``advice`` (parsed from ``message``)
        names; only then does it look at the code."""
        return False

    # -- the protocol ------------------------------------------------------------------

    def prepare(self, tree: cst.Module) -> None:
        diagnosis = self.rc.diagnosis
        self.message = message_text(diagnosis.evidence, diagnosis.message)
        self.advice = parse_advice(self.message)
        if not self.handles(self.advice, self.message):
            raise NotApplicable(f"the library's message does not ask for what {self.id} "
                                "changes")
        self.described: list[str] = []
        self.values = Values(self)
        self.make(tree)

    def make(self, tree: cst.Module) -> None:
        """Plan the edits (subclasses); raise :class:`NotApplicable` to decline."""

    # -- the calls ---------------------------------------------------------------------

    def at_failure(self, calls: list[cst.Call]) -> list[cst.Call]:
        """The calls of ``calls`` whose lines hold the failing line, else all of them."""
        line = self.rc.diagnosis.line
        if line:
            spans = [c for c in calls if self.program.line(c) <= line <= self._end(c)]
            if spans:
                return spans
        return calls

    def _end(self, node: cst.CSTNode) -> int:
        from libcst.metadata import PositionProvider

        pos = self.get_metadata(PositionProvider, node, None)
        return pos.end.line if pos is not None else 0

    def trainer_calls(self) -> list[cst.Call]:
        """``Trainer(...)`` (and ``Seq2SeqTrainer``, TRL's trainers, module subclasses)."""
        return [c for c in self.program.calls if self.program.is_trainer_call(c)
                or self.is_qualified(c.func, patterns.TRL_TRAINER)]

    def args_calls(self) -> list[cst.Call]:
        """``TrainingArguments(...)`` and the configs that extend it."""
        return self.values.calls(patterns.ANY_TRAINING_ARGS)

    def the_args(self) -> CallOwner:
        """The arguments the failure is about, as the owner of their settings (read with
        :meth:`~autofix.toolkit.values.Owner.value`, set where the script defines them
        with :meth:`~autofix.toolkit.values.Owner.set`): the ``TrainingArguments(...)``
        call on the failing line, else the one the failing trainer is given (followed
        through variables, helpers' returns and call sites), else the only one in the
        module. Raises :class:`NotApplicable` when it is not one call."""
        calls = self.args_calls()
        line = self.rc.diagnosis.line
        here = [c for c in calls if line and self.program.line(c) <= line <= self._end(c)]
        if len(here) == 1:
            return CallOwner(self.values, here[0])
        found: list[cst.Call] = []
        for trainer in self.at_failure(self.trainer_calls()):
            given = argument(trainer, "args", 1)
            if given is not None:
                found += [v for v in self.values.origins(given)
                          if isinstance(v, cst.Call) and v in calls and v not in found]
        if len(found) == 1:
            return CallOwner(self.values, found[0])
        if not found and len(calls) == 1:
            return CallOwner(self.values, calls[0])
        raise NotApplicable(f"{len(found) or len(calls)} TrainingArguments calls could "
                            "be the failing one" if (found or calls) else
                            "no TrainingArguments (or TRL config) call in this file")

    # -- datasets ----------------------------------------------------------------------

    def eval_split(self, trainer: cst.Call) -> cst.BaseExpression | None:
        """An evaluation split in scope at ``trainer``, of the same dataset as its training
        split: ``tokenized["validation"]`` when the trainer is given
        ``tokenized["train"]`` (or a variable holding it, or ``.select(...)`` of it) and
        the script shows that split exists (the split is read elsewhere, or the data are
        loaded with ``data_files={... "validation": ...}``, a ``DatasetDict({...})`` or
        ``train_test_split``); a variable that already holds that split is preferred.
        ``None`` when there is none."""
        train = argument(trainer, "train_dataset", 3)
        if train is None:
            return None
        for subscript in self._split_of(train):
            base = subscript.value
            splits = self.splits(base)
            for key in EVAL_SPLITS:
                if key not in splits:
                    continue
                held = self._holder(base, key, trainer)
                if held is not None:
                    return held
                if isinstance(base, cst.Name) and self.program.resolves(base.value, trainer):
                    return subscript.with_changes(slice=[cst.SubscriptElement(cst.Index(
                        cst.SimpleString(f'"{key}"')))])
        return None

    def _split_of(self, expr: cst.BaseExpression, depth: int = 0) -> list[cst.Subscript]:
        """The ``X["train"]`` subscripts ``expr`` is (through ``.select(...)`` and kin,
        and through the variables holding it)."""
        while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and \
                expr.func.attr.value in _SAME_SPLIT:
            expr = expr.func.value
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and \
                isinstance(expr.slice[0].slice, cst.Index):
            key = string_value(expr.slice[0].slice.value)
            return [expr] if key == "train" else []
        if isinstance(expr, cst.Name) and depth < 4:
            out: list[cst.Subscript] = []
            for value in self.values.origins(expr):
                if value is not expr and isinstance(value, cst.BaseExpression):
                    out += self._split_of(value, depth + 1)
            return out
        return []

    def splits(self, base: cst.BaseExpression) -> set[str]:
        """The split names the script shows ``base`` (a ``DatasetDict``) has."""
        found: set[str] = set()
        for node in m.findall(self.program.tree, m.Subscript()):
            assert isinstance(node, cst.Subscript)
            if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
                key = string_value(node.slice[0].slice.value)
                if key and key in EVAL_SPLITS and \
                        self.program.same_value(node.value, base):
                    found.add(key)
        pending = list(self.values.origins(base))
        seen: set[int] = set()
        while pending:
            value = pending.pop()
            if id(value) in seen or len(seen) > 40:
                continue
            seen.add(id(value))
            if not isinstance(value, cst.Call):
                continue
            receiver = map_receiver(value)
            if receiver is not None:
                pending += self.values.origins(receiver)
                continue
            func = value.func
            if isinstance(func, cst.Attribute) and func.attr.value == "train_test_split":
                found |= {"train", "test"}
            elif self.is_qualified(func, patterns.LOAD_DATASET):
                files = keyword(value, "data_files")
                for held in self.values.origins(files.value) if files is not None else ():
                    if isinstance(held, cst.Dict):
                        found |= {k for e in held.elements if isinstance(e, cst.DictElement)
                                  and (k := string_value(e.key))}
            elif self.is_qualified(func, patterns.DATASET_DICT):
                for arg in value.args[:1]:
                    for held in self.values.origins(arg.value):
                        if isinstance(held, cst.Dict):
                            found |= {k for e in held.elements
                                      if isinstance(e, cst.DictElement)
                                      and (k := string_value(e.key))}
        return found

    def _holder(self, base: cst.BaseExpression, key: str, at: cst.Call) -> cst.Name | None:
        """A variable visible at ``at`` that holds ``base[key]``."""
        for name in self.program.visible_names(at):
            for target in self.program.resolve(name, at):
                parent = self.program.parent(target)
                assign = self.program.parent(parent) if isinstance(parent, cst.AssignTarget) \
                    else None
                value = assign.value if isinstance(assign, cst.Assign) else None
                if isinstance(value, cst.Subscript) and len(value.slice) == 1 and \
                        isinstance(value.slice[0].slice, cst.Index) and \
                        string_value(value.slice[0].slice.value) == key and \
                        self.program.same_value(value.value, base) and \
                        self.program.resolves(name, at):
                    return cst.Name(name)
        return None

