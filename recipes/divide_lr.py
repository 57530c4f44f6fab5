"""diverging-lr: the loss grows and turns non-finite at the learning rate it steps with.

A step too large for the curvature overshoots: on a quadratic, gradient descent diverges
once the rate exceeds 2 / (the largest curvature), and the loss then grows geometrically
until it overflows. The fix divides the rate by :data:`FACTOR` where it is defined (a
literal at the optimizer's constructor or ``TrainingArguments(learning_rate=...)``, or
the constant, argparse or dataclass default it comes from:
:func:`autofix.toolkit.sources.literal_source`), at every ``torch.optim`` constructor and
``TrainingArguments`` call of the file; a constructor without a rate gets ``lr=`` its
default (1e-3 for torch's optimizers) divided. Only a rate equal to the one the run
stepped with is divided (the diagnosis' fact ``lr``: the largest rate the probe recorded,
the peak of a schedule), so the fixed script is left as it is. It is a trial:
``nan-loss``'s fixes are kept only when the next run's loss is finite and falling
(:data:`autofix.loop.verdicts.FALLING_PROOF`), else dropped and the next cause tried.
"""

from __future__ import annotations

import libcst as cst

from autofix.toolkit import Example, code, keyword
from autofix.toolkit.patterns import TORCH_OPTIMIZER, TRAINING_ARGS
from autofix.toolkit.scope import PlannedEdits, append_kw, replace_with
from autofix.toolkit.sources import CommandLine, literal_source

#: The learning rate is divided by this (one decade: the grid step of learning-rate
#: sweeps, and the margin a rate just past the divergence threshold needs).
FACTOR = 10.0
#: transformers' ``TrainingArguments.learning_rate`` default.
TRAINER_DEFAULT = 5e-5
#: A literal is the rate the run stepped with within this relative difference (a rate
#: read back from a float32 tensor or a schedule's peak).
SAME_RATE = 1e-3


def _number(node: cst.BaseExpression) -> float | None:
    """The value of a number literal (``0.01``, ``1e-3``, ``1``), else ``None``."""
    if isinstance(node, (cst.Float, cst.Integer)):
        return float(node.evaluated_value)
    return None


def _literal(value: float) -> cst.Float:
    text = f"{value:g}"
    return cst.Float(text if any(c in text for c in ".e") else f"{text}.0")


class DivideLearningRate(PlannedEdits):
    id = "divide-lr"
    category = "diverging-lr"
    title = "divide the learning rate by 10 (a trial, kept if the loss then falls)"
    nothing_to_do = "no optimizer or TrainingArguments learning rate found in the code"

    examples = (
        Example(
            before=(
                "import torch.optim as optim\n"
                "optimizer = optim.SGD(model.parameters(), lr=0.01)\n"
            ),
            after=(
                "import torch.optim as optim\n"
                "optimizer = optim.SGD(model.parameters(), lr=0.001)\n"
            ),
            facts=(("lr", "0.01"),),
        ),
        Example(  # the rate where it is defined: a module constant
            before=(
                "import torch\n"
                "LR = 1.0\n"
                "opt = torch.optim.AdamW(model.parameters(), LR)\n"
            ),
            after=(
                "import torch\n"
                "LR = 0.1\n"
                "opt = torch.optim.AdamW(model.parameters(), LR)\n"
            ),
            facts=(("lr", "1"),),
        ),
        Example(  # TrainingArguments
            before=(
                "from transformers import TrainingArguments\n"
                "args = TrainingArguments('out', learning_rate=1.0)\n"
            ),
            after=(
                "from transformers import TrainingArguments\n"
                "args = TrainingArguments('out', learning_rate=0.1)\n"
            ),
            facts=(("lr", "1.0"),),
        ),
        Example(  # no rate given: the default divided
            before=(
                "import torch\n"
                "opt = torch.optim.Adam(model.parameters())\n"
            ),
            after=(
                "import torch\n"
                "opt = torch.optim.Adam(model.parameters(), lr=0.0001)\n"
            ),
            facts=(("lr", "0.001"),),
        ),
        Example(  # a computed rate is not overwritten
            before=(
                "import torch\n"
                "opt = torch.optim.SGD(model.parameters(), lr=base * scale)\n"
            ),
            facts=(("lr", "0.5"),),
        ),
        Example(  # another rate than the one the run stepped with
            before=(
                "import torch\n"
                "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            ),
            facts=(("lr", "0.01"),),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        try:
            self.observed = float(self.rc.diagnosis.fact("lr"))
        except ValueError:
            self.observed = 0.0  # not recorded: every rate found is divided
        found: list[tuple[cst.Call, str, int | None, float]] = []
        for call in self.program.calls:
            if self.is_qualified(call.func, TORCH_OPTIMIZER):
                found.append((call, "lr", 1, 1e-3))
            elif self.is_qualified(call.func, TRAINING_ARGS):
                found.append((call, "learning_rate", None, TRAINER_DEFAULT))
        for call, name, position, default in found:
            self._divide(call, name, position, default)

    def _divide(self, call: cst.Call, name: str, position: int | None,
                default: float) -> None:
        arg = keyword(call, name)
        if arg is None and position is not None:
            plain = [a for a in call.args if a.keyword is None and not a.star]
            arg = plain[position] if len(plain) > position else None
        what = code(call.func)
        if arg is None:
            if not self._stepped_with(default):
                return
            new = default / FACTOR
            self.plan_edit(call, append_kw(name, _literal(new)),
                           f"{what}: {name}={new:g} (the default {default:g} / {FACTOR:g})")
            return
        found = literal_source(self.program, arg.value, self.rc.args, name)
        if isinstance(found, CommandLine):
            try:
                lower = f"{float(found.value) / FACTOR:g}"
            except ValueError:
                lower = f"a tenth of {found.value}"
            self.reason = (f"the learning rate comes from the command line ({found.flag} "
                           f"{found.value}): run it with {found.flag} {lower}")
            return
        if isinstance(found, str):
            self.reason = self.reason or found
            return
        value = _number(found.node)
        if value is None or value <= 0 or not self._stepped_with(value):
            return
        where = f" ({found.where}, line {self.program.line(found.node)})" if found.where else ""
        self.plan_edit(found.node, replace_with(_literal(value / FACTOR)),
                       f"{what}: {name}={code(found.node)} -> {value / FACTOR:g}{where}")

    def _stepped_with(self, value: float) -> bool:
        if self.observed <= 0:
            return True
        if abs(value - self.observed) <= SAME_RATE * self.observed:
            return True
        self.reason = self.reason or (f"the run stepped at a learning rate of "
                                      f"{self.observed:g}, not {value:g}")
        return False

    def summary(self) -> str:
        return f"divide the learning rate by {FACTOR:g} ({'; '.join(self.edits)})"
