"""label-out-of-range: the classification head has fewer outputs than there are classes.

Course (chapter 8): labels range over 0..2 but ``from_pretrained`` built a head with the
default ``num_labels=2``; fix "by adding num_labels=3 when we create the model".
N is measured from the data the probe saw given to ``Trainer`` (or converted with
``to_tf_dataset``, for Keras): the ``ClassLabel``
feature's ``num_classes``, else max label + 1 over the whole training split. Labels that
start at 1 need shifting, not a bigger head, so the recipe declines them.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, NotApplicable, code, keyword
from autofix.toolkit.scope import PlannedEdits, append_kw, option_dest, replace_with, string_value
from autofix.types import DatasetFacts, RecipeContext, TrainerFacts

_MODEL_CALL = r"transformers(\.[\w.]*)?\.(TF|Flax)?\w*ForSequenceClassification\.from_pretrained"


def _facts(label_max: float, classes: int | None = None, num_labels: int = 2) -> TrainerFacts:
    return TrainerFacts("Trainer", "BertForSequenceClassification", num_labels, (
        DatasetFacts("train", ("premise", "label"), 600, "label", "int", classes, 0, label_max),
    ))


def measured_num_labels(rc: RecipeContext) -> int:
    """The number of classes in the training data, from the probe's facts.

    Raises :class:`NotApplicable` when no training split was seen, when its labels are not
    integer class ids, or when they start at 1 (shift them instead).
    """
    candidates = [t.dataset("train") for t in reversed(rc.trainers)]
    candidates += [d for d in rc.datasets if d.role in ("to_tf_dataset", "dataloader")]
    for train in candidates:
        if train is None or not train.label_column:
            continue
        if train.label_classes:
            return train.label_classes
        if train.label_kind != "int" or train.label_max is None or train.label_min is None:
            raise NotApplicable(f"labels in column {train.label_column!r} are not class ids "
                                f"({train.label_kind or 'unknown kind'})")
        if train.label_min >= 1:
            raise NotApplicable(f"labels run from {train.label_min:g} to {train.label_max:g}: "
                                "they start at 1 and need shifting to 0, not a bigger head")
        if train.label_min < 0:
            raise NotApplicable(f"negative label {train.label_min:g} in the training data")
        return int(train.label_max) + 1
    raise NotApplicable("the probe saw no training dataset with a label column to count "
                        "classes (Trainer's train_dataset, a DataLoader's or to_tf_dataset's "
                        "source)")


class SetNumLabels(PlannedEdits):
    id = "label-out-of-range"
    category = "label-out-of-range"
    requires_imports = ("transformers",)
    title = "set num_labels to the number of classes in the data"
    nothing_to_do = "no *ForSequenceClassification.from_pretrained(...) call found"

    examples = (
        Example(
            before=(
                "from transformers import AutoModelForSequenceClassification\n"
                "model = AutoModelForSequenceClassification.from_pretrained(checkpoint)\n"
            ),
            after=(
                "from transformers import AutoModelForSequenceClassification\n"
                "model = AutoModelForSequenceClassification.from_pretrained(checkpoint,"
                " num_labels=3)\n"
            ),
            trainers=(_facts(2),),
        ),
        Example(  # a wrong existing value, an alias, ClassLabel count wins
            before=(
                "import transformers as t\n"
                "net = t.BertForSequenceClassification.from_pretrained(\n"
                "    ckpt, num_labels=2  # head\n"
                ")\n"
            ),
            after=(
                "import transformers as t\n"
                "net = t.BertForSequenceClassification.from_pretrained(\n"
                "    ckpt, num_labels=5  # head\n"
                ")\n"
            ),
            trainers=(_facts(3, classes=5),),
        ),
        Example(  # labels 1..3: shifting is the fix, not num_labels
            before=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "model = M.from_pretrained(checkpoint)\n"
            ),
            trainers=(TrainerFacts("Trainer", "X", 2, (
                DatasetFacts("train", ("label",), 9, "label", "int", None, 1, 3),)),),
        ),
        Example(  # no facts about the data: nothing measured, nothing changed
            before=(
                "from transformers import AutoModelForSequenceClassification\n"
                "model = AutoModelForSequenceClassification.from_pretrained(checkpoint)\n"
            ),
        ),
        Example(  # fixed at the source: the dataclass field default, not the use site
            before=(
                "from dataclasses import dataclass\n"
                "from transformers import AutoModelForSequenceClassification as M\n"
                "@dataclass\n"
                "class Config:\n"
                "    num_labels: int = 2  # classes\n"
                "def parse() -> Config:\n"
                "    return Config()\n"
                "def main():\n"
                "    cfg = parse()\n"
                "    M.from_pretrained(ckpt, num_labels=cfg.num_labels)\n"
            ),
            after=(
                "from dataclasses import dataclass\n"
                "from transformers import AutoModelForSequenceClassification as M\n"
                "@dataclass\n"
                "class Config:\n"
                "    num_labels: int = 3  # classes\n"
                "def parse() -> Config:\n"
                "    return Config()\n"
                "def main():\n"
                "    cfg = parse()\n"
                "    M.from_pretrained(ckpt, num_labels=cfg.num_labels)\n"
            ),
            trainers=(_facts(2),),
        ),
        Example(  # a module constant, used through a function parameter
            before=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "NUM_LABELS = 2\n"
                "def build(n):\n"
                "    return M.from_pretrained(ckpt, num_labels=n)\n"
                "model = build(NUM_LABELS)\n"
            ),
            after=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "NUM_LABELS = 3\n"
                "def build(n):\n"
                "    return M.from_pretrained(ckpt, num_labels=n)\n"
                "model = build(NUM_LABELS)\n"
            ),
            trainers=(_facts(2),),
        ),
        Example(  # an argparse default
            before=(
                "import argparse\n"
                "from transformers import AutoModelForSequenceClassification as M\n"
                "p = argparse.ArgumentParser()\n"
                "p.add_argument('--num-labels', type=int, default=2)\n"
                "args = p.parse_args()\n"
                "M.from_pretrained(ckpt, num_labels=args.num_labels)\n"
            ),
            after=(
                "import argparse\n"
                "from transformers import AutoModelForSequenceClassification as M\n"
                "p = argparse.ArgumentParser()\n"
                "p.add_argument('--num-labels', type=int, default=3)\n"
                "args = p.parse_args()\n"
                "M.from_pretrained(ckpt, num_labels=args.num_labels)\n"
            ),
            trainers=(_facts(2),),
        ),
        Example(  # a dict literal config
            before=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "CONFIG = {'lr': 5e-5, 'num_labels': 2}\n"
                "M.from_pretrained(ckpt, num_labels=CONFIG['num_labels'])\n"
            ),
            after=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "CONFIG = {'lr': 5e-5, 'num_labels': 3}\n"
                "M.from_pretrained(ckpt, num_labels=CONFIG['num_labels'])\n"
            ),
            trainers=(_facts(2),),
        ),
        Example(  # a computed value: reported, not overwritten with a literal
            before=(
                "from transformers import AutoModelForSequenceClassification as M\n"
                "M.from_pretrained(ckpt, num_labels=len(names))\n"
            ),
            trainers=(_facts(2),),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        self.num_labels = measured_num_labels(self.rc)
        self.sources: list[str] = []
        done: set[cst.CSTNode] = set()
        for call in self.program.calls:
            if not self.is_qualified(call.func, _MODEL_CALL):
                continue
            value = cst.Integer(str(self.num_labels))
            existing = keyword(call, "num_labels")
            if existing is None:
                self.plan_edit(call, append_kw("num_labels", value),
                               f"num_labels={self.num_labels}")
                continue
            found = self.source(existing.value, 0)
            if isinstance(found, str):
                raise NotApplicable(f"{found}; set it to {self.num_labels} there")
            literal, where = found
            if literal in done:
                continue
            done.add(literal)
            if literal.evaluated_value == self.num_labels:
                self.reason = f"num_labels is already {self.num_labels}"
                continue
            line = self.program.line(literal)
            at_use = literal is existing.value
            description = (f"num_labels={literal.value} -> {self.num_labels}" if at_use else
                           f"{where} (line {line}): {literal.value} -> {self.num_labels}")
            if not at_use:
                self.sources.append(f"{where}, line {line}")
            self.plan_edit(literal, replace_with(value), description)

    def source(self, expr: cst.BaseExpression, depth: int) -> tuple[cst.Integer, str] | str:
        """The integer literal ``expr``'s value comes from and where it is (a module
        constant, a class field default, an argparse default, a dict entry, a parameter's
        default or argument); a reason string when it cannot be followed to one."""
        program = self.program
        text = code(expr)
        if depth > 8:
            return f"num_labels={text} could not be followed to a literal"
        if isinstance(expr, cst.Integer):
            return expr, "num_labels"
        if isinstance(expr, cst.Name):
            targets = program.resolve(expr.value, expr)
            if len(targets) != 1:
                return (f"{text} is assigned in {len(targets)} places" if targets else
                        f"{text} is not defined where num_labels is set")
            return self._from_target(targets[0], text, depth)
        if isinstance(expr, cst.Attribute):
            attr = expr.attr.value
            if m.matches(expr.value, m.Name("self")):
                values = program.self_assignments(expr, attr)
                if len(values) != 1:
                    return f"self.{attr} is assigned in {len(values)} places"
                return self.source(values[0], depth + 1)
            return self._one([self._attribute(v, attr, depth) for v in
                              self._owners(expr.value)], text)
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and \
                isinstance(expr.slice[0].slice, cst.Index):
            key = string_value(expr.slice[0].slice.value)
            if key is not None:
                return self._one([self._entry(v, key, depth) for v in
                                  program.values(expr.value)], text)
        return f"num_labels={text} is not a value autofix can trace to a literal"

    def _one(self, found: list[tuple[cst.Integer, str] | str], text: str
             ) -> tuple[cst.Integer, str] | str:
        good = list({id(f[0]): f for f in found if not isinstance(f, str)}.values())
        if len(good) == 1:
            return good[0]
        if len(good) > 1:
            return f"num_labels={text} comes from {len(good)} places"
        return next((f for f in found if isinstance(f, str)), f"{text} could not be followed")

    def _owners(self, expr: cst.BaseExpression) -> list[cst.CSTNode]:
        if isinstance(expr, cst.Name):
            classes = [t for t in self.program.resolve(expr.value, expr)
                       if isinstance(t, cst.ClassDef)]
            if classes:
                return list(classes)
        return self.program.values(expr)

    def _from_target(self, target: cst.CSTNode, text: str, depth: int
                     ) -> tuple[cst.Integer, str] | str:
        program = self.program
        if isinstance(target, cst.Param):
            func = program._param_function(target)
            name = target.name.value
            given = [program.bound(func, s, name) for s in program.call_sites(func)] \
                if func is not None else []
            args = [g for g in given if g is not None]
            if args:
                return self._one([self.source(a, depth + 1) for a in args], text)
            if target.default is not None:
                found = self.source(target.default, depth + 1)
                if not isinstance(found, str) and found[0] is target.default:
                    fname = func.name.value if func is not None else "lambda"
                    return found[0], f"the default of parameter {name} of {fname}()"
                return found
            return f"{text} is a parameter that no call site fills"
        parent = program.parent(target)
        value = None
        if isinstance(parent, cst.AssignTarget):
            assign = program.parent(parent)
            value = assign.value if isinstance(assign, cst.Assign) else None
        elif isinstance(parent, cst.AnnAssign):
            value = parent.value
        if value is None:
            return f"{text} is not assigned a value autofix can follow"
        found = self.source(value, depth + 1)
        if not isinstance(found, str) and found[0] is value:
            return found[0], f"{text}"
        return found

    def _attribute(self, owner: cst.CSTNode, attr: str, depth: int
                   ) -> tuple[cst.Integer, str] | str:
        program = self.program
        if isinstance(owner, cst.Call):
            cls = program.class_called(owner)
            if cls is not None:
                given = keyword(owner, attr)
                if given is not None:
                    return self.source(given.value, depth + 1)
                return self._field(cls, attr, depth)
            if isinstance(owner.func, cst.Attribute) and owner.func.attr.value == "parse_args":
                return self._option(attr, depth)
        if isinstance(owner, cst.ClassDef):
            return self._field(owner, attr, depth)
        return f"num_labels comes from .{attr} of {code(owner)[:60]}, which autofix cannot follow"

    def _field(self, cls: cst.ClassDef, attr: str, depth: int) -> tuple[cst.Integer, str] | str:
        for stmt in cls.body.body:
            for small in getattr(stmt, "body", ()):
                value = None
                if isinstance(small, cst.AnnAssign) and m.matches(small.target, m.Name(attr)):
                    value = small.value
                elif isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                        m.matches(small.targets[0].target, m.Name(attr)):
                    value = small.value
                else:
                    continue
                default = keyword(value, "default") if isinstance(value, cst.Call) else None
                if default is not None:
                    value = default.value  # dataclasses.field(default=...)
                if value is None:
                    return f"{cls.name.value}.{attr} has no default"
                found = self.source(value, depth + 1)
                if not isinstance(found, str) and found[0] is value:
                    return found[0], f"the default of {cls.name.value}.{attr}"
                return found
        for base in cls.bases:
            if isinstance(base.value, cst.Name) and base.value.value in self.program.classes:
                return self._field(self.program.classes[base.value.value], attr, depth + 1)
        return f"class {cls.name.value} has no field {attr}"

    def _option(self, attr: str, depth: int) -> tuple[cst.Integer, str] | str:
        for call in self.program.calls:
            if not (isinstance(call.func, cst.Attribute) and call.func.attr.value ==
                    "add_argument" and option_dest(call) == attr):
                continue
            flags = [t for t in (string_value(a.value) for a in call.args if a.keyword is None)
                     if t and t.startswith("-")]
            for i, arg in enumerate(self.rc.args):
                flag, _, inline = arg.partition("=")
                if flag in flags:
                    given = inline or (self.rc.args[i + 1] if i + 1 < len(self.rc.args) else "")
                    raise NotApplicable(
                        f"num_labels comes from the command line ({flag} {given}): run the "
                        f"script with {flag} {self.num_labels}")
            default = keyword(call, "default")
            if default is None:
                return f"{flags[0] if flags else attr} has no default: pass it on the command line"
            found = self.source(default.value, depth + 1)
            if not isinstance(found, str) and found[0] is default.value:
                return found[0], f"the default of {flags[0] if flags else attr}"
            return found
        return f"no parser.add_argument(...) defines {attr}"

    def _entry(self, owner: cst.CSTNode, key: str, depth: int) -> tuple[cst.Integer, str] | str:
        if isinstance(owner, cst.Dict):
            for element in owner.elements:
                if isinstance(element, cst.DictElement) and string_value(element.key) == key:
                    found = self.source(element.value, depth + 1)
                    if not isinstance(found, str) and found[0] is element.value:
                        return found[0], f"the {key!r} entry of the config dict"
                    return found
        return f"no dict literal with a {key!r} entry found for num_labels"

    def summary(self) -> str:
        where = f" (changed at its source: {'; '.join(self.sources)})" if self.sources else ""
        return (f"set num_labels={self.num_labels}, the number of classes in the training "
                f"data{where}")
