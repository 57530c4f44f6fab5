"""config-value-wrong-type: a string where a number is needed.

The facts at the failure name the value: the boundary that checks the number holds the
string under its parameter's name (``lr='5e-5'`` in ``AdamW.__init__``, ``batch_size='16'``
in ``BatchSampler``), and a ``TrainingArguments`` in the failing frames lists its fields
declared a number that hold a string (``TrainingArguments`` itself accepts them). The
recipe follows the argument given under that name (or that ``TrainingArguments`` field) to
where the value is read, and converts it there:

- an ``argparse`` option (``args.batch_size``): ``type=int`` / ``type=float`` on its
  ``add_argument`` (the type of its default); every other option of the module with a
  number default and no ``type=`` gets its type too (a value given on the command line is
  always a string);
- an environment variable (``os.environ.get("X", 8)``, ``os.getenv``, ``os.environ["X"]``):
  ``int(...)`` / ``float(...)`` around the read; every other read of the module with a
  number default gets the same;
- a config value (``hp["optim"]["lr"]`` from JSON or YAML): ``float(...)`` / ``int(...)``
  around it; a config splatted into ``TrainingArguments(**cfg["training"])``:
  ``cfg["training"]["learning_rate"] = float(cfg["training"]["learning_rate"])`` right
  after ``cfg`` is read (PyYAML follows YAML 1.1, where ``5e-5`` without a dot is a
  string);
- a string literal (``learning_rate="5e-5"``): the number literal.

The target type is the field's declared one, else the default's, else the parameter's
(counts and sizes are ``int``, rates ``float``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

import libcst as cst

from autofix.categories.catalogue.values import mistyped_settings, numeric_strings
from autofix.categories.failure import number_in
from autofix.toolkit import Example, NotApplicable, code, insert, keyword, patterns
from autofix.toolkit.facts import example_failure, failure_of
from autofix.toolkit.scope import PlannedEdits, append_kw, option_dest, replace_with, string_value
from autofix.toolkit.values import Values
from autofix.types import ExceptionInfo

#: Parameters that count (an ``int``); the other numeric ones are rates (``float``).
INT_PARAMS = frozenset({
    "batch_size", "per_device_train_batch_size", "per_device_eval_batch_size", "epochs",
    "num_epochs", "max_steps", "warmup_steps", "gradient_accumulation_steps", "num_workers",
    "seed", "max_length", "logging_steps", "eval_steps", "save_steps", "step_size",
    "num_warmup_steps", "num_training_steps", "num_labels", "T_max",
})
_NUMBER = (cst.Integer, cst.Float)


def _failure(param: str, value: str, mistyped: dict[str, dict[str, str]] | None = None,
             message: str = "'<=' not supported between instances of 'float' and 'str'"
             ) -> ExceptionInfo:
    user = {"args": {"kind": "object", "type": "transformers.training_args.TrainingArguments",
                     "mistyped": mistyped}} if mistyped else {}
    return example_failure("TypeError", message, user=user,
                           library={param: {"kind": "str", "value": value}},
                           library_file="torch/optim/adamw.py", library_function="__init__")


def _type_of(node: cst.BaseExpression | None) -> str:
    if isinstance(node, cst.Integer):
        return "int"
    if isinstance(node, cst.Float):
        return "float"
    return ""


class ConvertNumber(PlannedEdits):
    id = "config-value-type"
    category = "config-value-wrong-type"
    title = "convert a number read as a string where it is read"
    nothing_to_do = "no argument, environment read, config value or literal gives the string"

    examples = (
        Example(  # argparse without type=: every number option gets its default's type
            before="import argparse\nimport torch\n"
                   "parser = argparse.ArgumentParser()\n"
                   'parser.add_argument("--batch_size", default=8)\n'
                   'parser.add_argument("--lr", default=5e-5)\n'
                   'parser.add_argument("--name", default="run")\n'
                   "args = parser.parse_args()\n"
                   "loader = torch.utils.data.DataLoader(ds, batch_size=args.batch_size)\n",
            after="import argparse\nimport torch\n"
                  "parser = argparse.ArgumentParser()\n"
                  'parser.add_argument("--batch_size", default=8, type=int)\n'
                  'parser.add_argument("--lr", default=5e-5, type=float)\n'
                  'parser.add_argument("--name", default="run")\n'
                  "args = parser.parse_args()\n"
                  "loader = torch.utils.data.DataLoader(ds, batch_size=args.batch_size)\n",
            failure=_failure("batch_size", "16", message="batch_size should be a positive "
                             "integer value, but got batch_size=16"),
        ),
        Example(  # a JSON value: converted where it is read
            before="import json\nimport torch\nhp = json.loads(text)\n"
                   'opt = torch.optim.AdamW(params, lr=hp["optim"]["lr"])\n',
            after="import json\nimport torch\nhp = json.loads(text)\n"
                  'opt = torch.optim.AdamW(params, lr=float(hp["optim"]["lr"]))\n',
            failure=_failure("lr", "5e-5"),
        ),
        Example(  # environment variables through a TrainingArguments field
            before="import os\nfrom transformers import TrainingArguments\n"
                   'batch_size = os.environ.get("BATCH", 8)\n'
                   'epochs = os.getenv("EPOCHS", 1)\n'
                   'args = TrainingArguments("out", per_device_train_batch_size=batch_size,\n'
                   "                         num_train_epochs=epochs)\n",
            after="import os\nfrom transformers import TrainingArguments\n"
                  'batch_size = int(os.environ.get("BATCH", 8))\n'
                  'epochs = int(os.getenv("EPOCHS", 1))\n'
                  'args = TrainingArguments("out", per_device_train_batch_size=batch_size,\n'
                  "                         num_train_epochs=epochs)\n",
            failure=_failure("batch_size", "16", {"per_device_train_batch_size": {
                "value": "16", "expected": "int"}}, "batch_size should be a positive "
                "integer value, but got batch_size=16"),
        ),
        Example(  # a YAML section splatted into TrainingArguments
            before="import yaml\nfrom transformers import TrainingArguments\n"
                   "cfg = yaml.safe_load(text)\n"
                   'args = TrainingArguments(**cfg["training"])\n',
            after="import yaml\nfrom transformers import TrainingArguments\n"
                  "cfg = yaml.safe_load(text)\n"
                  'cfg["training"]["learning_rate"] = float(cfg["training"]["learning_rate"])\n'
                  'args = TrainingArguments(**cfg["training"])\n',
            failure=_failure("lr", "5e-5", {"learning_rate": {"value": "5e-5",
                                                              "expected": "float"}}),
        ),
        Example(  # a string literal
            before="from transformers import TrainingArguments\n"
                   'args = TrainingArguments("out", learning_rate="5e-5")\n',
            after="from transformers import TrainingArguments\n"
                  'args = TrainingArguments("out", learning_rate=5e-5)\n',
            failure=_failure("lr", "5e-5", {"learning_rate": {"value": "5e-5",
                                                              "expected": "float"}}),
        ),
        Example(  # the number comes from a place the recipe cannot see: no guess
            before="import torch\ndef build(params, lr):\n"
                   "    return torch.optim.AdamW(params, lr=lr)\n",
            failure=_failure("lr", "5e-5"),
        ),
        Example(  # no facts: nothing is known to be a string
            before="import json\nimport torch\nhp = json.loads(text)\n"
                   'opt = torch.optim.AdamW(params, lr=hp["lr"])\n',
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        self.values = Values(self)
        failure = failure_of(self.rc)
        if failure is None:
            raise NotApplicable("the facts at the failure are missing")
        wanted: dict[str, str] = {}  # keyword -> type
        for name, entry in mistyped_settings(failure).items():
            wanted[name] = entry.get("expected", "float")
        for name, _ in numeric_strings(failure):
            wanted.setdefault(name, "int" if name in INT_PARAMS else "float")
        if not wanted:
            raise NotApplicable("the facts at the failure show no string for a number")
        self.fixed_env = False
        self.fixed_option = False
        for call in self.program.calls:
            splat = next((a for a in call.args if a.star == "**"), None) \
                if self.is_qualified(call.func, patterns.TRAINING_ARGS) else None
            for name, kind in wanted.items():
                arg = keyword(call, name)
                if arg is not None:
                    for source in self.values.origins(arg.value):
                        self._convert(source, arg.value, kind, name)
                elif splat is not None and name in mistyped_settings(failure):
                    self._splatted(tree, call, splat.value, name, kind)
        if self.fixed_option:  # the same fault in every number option without a type
            for call in self._options():
                default = keyword(call, "default")
                kind = _type_of(default.value) if default is not None else ""
                if kind:
                    self._option_type(call, kind)
        if self.fixed_env:  # and in every environment read with a number default
            for call in self.program.calls:
                if self.is_qualified(call.func, patterns.ENV_GET) and len(call.args) == 2:
                    kind = _type_of(call.args[1].value)
                    if kind:
                        self._wrap(call, kind, "the environment variable")

    # -- where the value comes from -------------------------------------------------

    def _convert(self, source: cst.CSTNode, use: cst.BaseExpression, kind: str,
                 name: str) -> None:
        if isinstance(source, cst.Call) and self.is_qualified(source.func, patterns.ENV_GET):
            default = source.args[1].value if len(source.args) == 2 else None
            self.fixed_env = True
            self._wrap(source, _type_of(default) or kind, "the environment variable")
        elif isinstance(source, cst.Subscript) and self.is_qualified(source.value,
                                                                    patterns.OS_ENVIRON):
            self.fixed_env = True
            self._wrap(source, kind, "the environment variable")
        elif isinstance(source, cst.Subscript):
            self._wrap(source, kind, "the config value")
        elif isinstance(source, cst.Attribute) and self._parsed_args(source.value):
            for call in self._options():
                if option_dest(call) == source.attr.value:
                    given = keyword(call, "default")
                    self.fixed_option = True
                    self._option_type(call, _type_of(given.value if given else None) or kind)
        elif isinstance(source, cst.SimpleString):
            text = string_value(source)
            number = number_in(text) if text is not None else None
            if text is None or number is None or source in self.plan:
                return
            literal: cst.BaseExpression = cst.Integer(text.strip()) \
                if kind == "int" and number.is_integer() and text.strip().isdigit() \
                else cst.Float(text.strip()) if "." in text or "e" in text.lower() \
                else cst.Float(f"{text.strip()}.0")
            self.plan_edit(source, replace_with(literal),
                           f"{name}={code(literal)}, a number, not the string {code(source)}")

    def _parsed_args(self, holder: cst.BaseExpression) -> bool:
        """``holder`` is the namespace ``parser.parse_args(...)`` returns."""
        return any(isinstance(v, cst.Call) and isinstance(v.func, cst.Attribute)
                   and v.func.attr.value == "parse_args" for v in self.values.origins(holder))

    def _options(self) -> Iterator[cst.Call]:
        for call in self.program.calls:
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "add_argument":
                yield call

    def _option_type(self, call: cst.Call, kind: str) -> None:
        if keyword(call, "type") is not None or keyword(call, "action") is not None \
                or call in self.plan:
            return
        self.plan_edit(call, append_kw("type", cst.Name(kind)),
                       f"type={kind} on the option {option_dest(call)!r} (a value given on "
                       "the command line is a string)")

    def _wrap(self, node: cst.BaseExpression, kind: str, what: str) -> None:
        if node in self.plan or self._converted(node):
            return
        wrapped = cst.Call(func=cst.Name(kind), args=[cst.Arg(node)])
        self.plan_edit(node, replace_with(wrapped), f"{code(wrapped)}: {what} as a number")

    def _converted(self, node: cst.CSTNode) -> bool:
        parent = self.program.parent(node)
        holder = self.program.parent(parent) if isinstance(parent, cst.Arg) else None
        return isinstance(holder, cst.Call) and isinstance(holder.func, cst.Name) \
            and holder.func.value in ("int", "float")

    def _splatted(self, tree: cst.Module, call: cst.Call, splat: cst.BaseExpression,
                  name: str, kind: str) -> None:
        """``<splat>["name"] = kind(<splat>["name"])`` after the config is read."""
        root = splat
        while isinstance(root, cst.Subscript):
            root = root.value
        if not isinstance(root, cst.Name):
            return
        item = f"{code(splat)}[{name!r}]".replace("'", '"')
        text = f"{item} = {kind}({item})"
        try:
            anchor = insert.on_path_to(self, insert.last_assignment(self, root, root.value),
                                       root)
        except insert.NoPlace:
            return
        if any(code(s).strip() == text for s in insert.assignment_statements(
                self, root, root.value)) or text in code(tree):
            return
        new = insert.parse_statement(text)

        def add(node: cst.CSTNode) -> cst.CSTNode:
            nodes = list(node.nodes) if isinstance(node, cst.FlattenSentinel) else [node]
            return cast(cst.CSTNode, cst.FlattenSentinel([*nodes, new]))

        self.plan_edit(anchor, add, f"{text}, after {root.value} is read")
