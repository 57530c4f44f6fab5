"""lr-too-high: a learning rate of 1e-3 or more on a pretrained transformer.

The HF course (chapter 8) advises 1e-5 to 1e-4 for fine-tuning; Keras' ``"adam"`` string
and ``torch.optim.Adam``/``AdamW`` without ``lr`` both mean 1e-3, which makes the loss
stall or fall and come back to chance (measured on the project's samples). The fix sets
5e-5, ``TrainingArguments``' default learning rate and inside the course's range:

* Keras: ``compile(optimizer="adam")`` on an HF TF model becomes
  ``optimizer=Adam(learning_rate=5e-5)`` imported from the Keras the model really uses
  (``tf_keras`` for HF TF models, from the probe; a Keras 3 optimizer fails on them);
  an ``Adam(...)`` at 1e-3 or more gets ``learning_rate=5e-5``.
* ``TrainingArguments(learning_rate=X)`` with X >= 1e-3 gets 5e-5.
* ``torch.optim.Adam/AdamW(params)`` with no ``lr`` or ``lr`` >= 1e-3 gets ``lr=5e-5``.

A rate that is not a literal at the call (``lr=args.learning_rate``, ``learning_rate=
cfg.lr``) is changed where it is defined (:func:`autofix.toolkit.sources.literal_source`:
an argparse or dataclass default, a module constant, a config dict entry). A rate set on
the script's command line (``--learning_rate 1e-3``, also to ``HfArgumentParser``'s
``TrainingArguments``) is not in the source: the recipe leaves the script as it is and its
reason names the flag to change.
"""

from __future__ import annotations

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from autofix.categories import LR_TOO_HIGH
from autofix.toolkit import Example, code, keyword, patterns
from autofix.toolkit.patterns import KERAS_ADAM, TORCH_ADAM, TRAINING_ARGS
from autofix.toolkit.scope import PlannedEdits, append_kw, replace_with
from autofix.toolkit.sources import CommandLine, literal_source, option_on_command_line
from autofix.types import KerasFacts

TOO_HIGH = LR_TOO_HIGH
#: The rate the fix sets: TrainingArguments' default, inside the course's 1e-5..1e-4.
FINE_TUNING_LR = "5e-5"


def _value(node: cst.BaseExpression) -> float | None:
    """The number a literal like ``1e-3`` or ``0.001`` stands for (else ``None``)."""
    try:
        value = cst.ensure_type(node, cst.Float).evaluated_value \
            if isinstance(node, cst.Float) else cst.ensure_type(node, cst.Integer).evaluated_value
    except Exception:  # noqa: BLE001 - not a plain number literal
        return None
    return float(value)


def _keras(num: int = 3) -> tuple[KerasFacts, ...]:
    return (KerasFacts("tf_keras", "TFBertForSequenceClassification", True, num, "Adam", 1e-3,
                       None, None),)


#: Command-line flags that set the learning rate (HfArgumentParser's and the example
#: scripts' argparse option, and common spellings).
_FLAGS = ("--learning_rate", "--learning-rate", "--lr")


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return 0.0


def _command_line(given: CommandLine) -> str:
    return (f"the learning rate comes from the command line ({given.flag} {given.value}), "
            f"not the script: run it with {given.flag} {FINE_TUNING_LR}")


class LowerLearningRate(PlannedEdits):
    id = "lr-too-high"
    category = "lr-too-high"
    title = "lower the learning rate to 5e-5 for fine-tuning"
    TRACK = {"model": patterns.TF_MODEL}
    nothing_to_do = (f"no learning rate >= {TOO_HIGH:g} found in the code "
                     '("adam", Adam(), AdamW(), TrainingArguments)')

    examples = (
        Example(
            before=(
                "from transformers import TFAutoModelForSequenceClassification\n"
                "model = TFAutoModelForSequenceClassification.from_pretrained(ckpt)\n"
                'model.compile(optimizer="adam")\n'
            ),
            after=(
                "from tf_keras.optimizers import Adam\n"
                "from transformers import TFAutoModelForSequenceClassification\n"
                "\n"
                "model = TFAutoModelForSequenceClassification.from_pretrained(ckpt)\n"
                "model.compile(optimizer=Adam(learning_rate=5e-5))\n"
            ),
            keras=_keras(),
        ),
        Example(  # a Keras optimizer object at 1e-3
            before=(
                "import tf_keras\n"
                "opt = tf_keras.optimizers.Adam(learning_rate=1e-3)\n"
            ),
            after=(
                "import tf_keras\n"
                "opt = tf_keras.optimizers.Adam(learning_rate=5e-5)\n"
            ),
        ),
        Example(  # hand-written PyTorch loop, default lr 1e-3
            before=(
                "import torch\n"
                "optimizer = torch.optim.Adam(model.parameters())\n"
            ),
            after=(
                "import torch\n"
                "optimizer = torch.optim.Adam(model.parameters(), lr=5e-5)\n"
            ),
        ),
        Example(  # TrainingArguments, alias import
            before=(
                "from transformers import TrainingArguments as TA\n"
                "args = TA('out', learning_rate=0.001, num_train_epochs=1)\n"
            ),
            after=(
                "from transformers import TrainingArguments as TA\n"
                "args = TA('out', learning_rate=5e-5, num_train_epochs=1)\n"
            ),
        ),
        Example(  # the rate where it is defined: the argparse default
            before=(
                "import argparse\n"
                "import torch\n"
                "parser = argparse.ArgumentParser()\n"
                "parser.add_argument('--learning_rate', type=float, default=1e-3)\n"
                "args = parser.parse_args()\n"
                "optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)\n"
            ),
            after=(
                "import argparse\n"
                "import torch\n"
                "parser = argparse.ArgumentParser()\n"
                "parser.add_argument('--learning_rate', type=float, default=5e-5)\n"
                "args = parser.parse_args()\n"
                "optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)\n"
            ),
        ),
        Example(  # a dataclass default given to TrainingArguments
            before=(
                "from dataclasses import dataclass, field\n"
                "from transformers import TrainingArguments\n"
                "@dataclass\n"
                "class Hparams:\n"
                "    lr: float = field(default=2e-3)\n"
                "hp = Hparams()\n"
                "args = TrainingArguments('out', learning_rate=hp.lr)\n"
            ),
            after=(
                "from dataclasses import dataclass, field\n"
                "from transformers import TrainingArguments\n"
                "@dataclass\n"
                "class Hparams:\n"
                "    lr: float = field(default=5e-5)\n"
                "hp = Hparams()\n"
                "args = TrainingArguments('out', learning_rate=hp.lr)\n"
            ),
        ),
        Example(  # the command line sets it: the script is left alone, the flag named
            before=(
                "from transformers import HfArgumentParser, TrainingArguments\n"
                "(args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()\n"
            ),
            args=("--output_dir", "out", "--learning_rate", "1e-3"),
        ),
        Example(  # already a fine-tuning rate
            before=(
                "from torch.optim import AdamW\n"
                "from transformers import TrainingArguments\n"
                "optimizer = AdamW(model.parameters(), lr=2e-5)\n"
                "args = TrainingArguments('out', learning_rate=3e-5)\n"
            ),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        for call in self.program.calls:
            func = call.func
            if self.is_qualified(func, TORCH_ADAM):
                self._lower(call, "lr", code(func), True, position=1)
            elif self.is_qualified(func, KERAS_ADAM):
                self._lower(call, "learning_rate", code(func), True, position=0)
            elif self.is_qualified(func, TRAINING_ARGS):
                self._lower(call, "learning_rate", code(func), False)
        if not self.edits and not self.reason:
            given = option_on_command_line(list(_FLAGS), self.rc.args)
            if given is not None and _number(given.value) >= TOO_HIGH:
                self.reason = _command_line(given)

    def _lower(self, call: cst.Call, name: str, what: str, default_too_high: bool,
               position: int | None = None) -> None:
        arg = keyword(call, name)
        if arg is None and position is not None:
            plain = [a for a in call.args if a.keyword is None and not a.star]
            arg = plain[position] if len(plain) > position else None
        if arg is None:
            if default_too_high:
                self.plan_edit(call, append_kw(name, cst.Float(FINE_TUNING_LR)),
                               f"{what}: {name}={FINE_TUNING_LR} (default was 1e-3)")
            return
        found = literal_source(self.program, arg.value, self.rc.args, name)
        if isinstance(found, CommandLine):
            if _number(found.value) >= TOO_HIGH:
                self.reason = _command_line(found)
            return
        if isinstance(found, str):
            self.reason = self.reason or found
            return
        value = _value(found.node)
        if value is None or value < TOO_HIGH:
            return
        where = f" ({found.where}, line {self.program.line(found.node)})" if found.where else ""
        self.plan_edit(found.node, replace_with(cst.Float(FINE_TUNING_LR)),
                       f"{what}: {name}={code(found.node)} -> {FINE_TUNING_LR}{where}")

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if self.is_model_compile(original_node):
            return self._keras_string(original_node, updated_node)
        return updated_node

    def _keras_string(self, node: cst.Call, call: cst.Call) -> cst.Call:
        arg = keyword(call, "optimizer")
        if arg is None and call.args and call.args[0].keyword is None:
            arg = call.args[0]
        if arg is None or not isinstance(arg.value, cst.SimpleString) \
                or arg.value.evaluated_value.lower() != "adam":
            return call
        keras_module = next((k.keras for k in self.rc.keras if k.keras), "tf_keras")
        AddImportsVisitor.add_needed_import(self.context, f"{keras_module}.optimizers", "Adam")
        self.changed(node, f'optimizer="adam" (1e-3) -> {keras_module}.optimizers.'
                           f"Adam(learning_rate={FINE_TUNING_LR})")
        new_value = cst.parse_expression(f"Adam(learning_rate={FINE_TUNING_LR})")
        return call.with_changes(args=[a.with_changes(value=new_value) if a is arg else a
                                       for a in call.args])

    def summary(self) -> str:
        return f"lower the learning rate for fine-tuning ({'; '.join(self.edits)})"
