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
the peak of a schedule), so the fixed script is left as it is. It is a ladder of
candidates (:data:`RUNGS`: the rate divided by 10, 100, 1000, never under :data:`FLOOR`),
each run before one is kept (:mod:`autofix.loop.candidates`): the first whose loss is
finite and falling (the ``Proof.falling`` of its category) is committed; when none
is, the next cause is tried. The rates are found through the value-source service
(:mod:`autofix.toolkit.values`): a literal at the optimizer's constructor or
``TrainingArguments``, the constant, argparse or dataclass default it comes from, or the
``sys.argv`` defaults an ``HfArgumentParser`` parses.
"""

from __future__ import annotations

from functools import partial

import libcst as cst

from autofix.toolkit import Example, NotApplicable
from autofix.toolkit.patterns import TORCH_OPTIMIZER, TRAINING_ARGS
from autofix.toolkit.scope import Option, PlannedEdits
from autofix.toolkit.values import CallOwner, Owner, Values

#: The learning rate is divided by this (one decade: the grid step of learning-rate
#: sweeps, and the margin a rate just past the divergence threshold needs).
FACTOR = 10.0
#: The ladder: the rate divided by 10, by 100, by 1000, tried in that order (candidates,
#: :mod:`autofix.loop.candidates`) until a run's loss is finite and falling.
RUNGS = 3
#: No rung goes under this rate (a rate this low trains nothing in a fine-tuning budget).
FLOOR = 1e-7
#: transformers' ``TrainingArguments.learning_rate`` default.
TRAINER_DEFAULT = 5e-5
#: A literal is the rate the run stepped with within this relative difference (a rate
#: read back from a float32 tensor or a schedule's peak).
SAME_RATE = 1e-3


class DivideLearningRate(PlannedEdits):
    id = "divide-lr"
    category = "diverging-lr"
    title = ("divide the learning rate by 10, then 100, 1000 (each tried; kept when the loss "
             "then falls)")
    subject_from_change = True
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
        Example(  # the second rung of the ladder: the rate divided by 100
            before=(
                "import torch\n"
                "opt = torch.optim.SGD(model.parameters(), lr=10.0)\n"
            ),
            after=(
                "import torch\n"
                "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            ),
            facts=(("lr", "10"),),
            choice=1,
        ),
        Example(  # the defaults HfArgumentParser parses from sys.argv
            before=(
                "import sys\nfrom transformers import HfArgumentParser, TrainingArguments\n"
                "sys.argv += ['--output_dir', 'o', '--learning_rate', '0.5']\n"
                "(args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()\n"
            ),
            after=(
                "import sys\nfrom transformers import HfArgumentParser, TrainingArguments\n"
                "sys.argv += ['--output_dir', 'o', '--learning_rate', '0.05']\n"
                "(args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()\n"
            ),
            facts=(("lr", "0.5"),),
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
        values = Values(self)
        owners: list[tuple[Owner, str, int | None, float]] = [
            (CallOwner(values, c), "lr", 1, 1e-3) for c in values.calls(TORCH_OPTIMIZER)]
        owners += [(o, "learning_rate", None, TRAINER_DEFAULT)
                   for o in values.owners(TRAINING_ARGS)]
        rates: list[tuple[Owner, str, int | None, float, bool]] = []
        for owner, name, position, default in owners:
            found = owner.get(name, position=position)
            if found.command_line is not None:
                flag, given = found.command_line.flag, found.command_line.value
                try:
                    lower = f"{float(given) / FACTOR:g}"
                except ValueError:
                    lower = f"a tenth of {given}"
                self.reason = (f"the learning rate comes from the command line ({flag} "
                               f"{given}): run it with {flag} {lower}")
                continue
            value = found.value if found.present else default
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                self.reason = self.reason or found.reason
                continue
            if value > 0 and self._stepped_with(float(value)):
                rates.append((owner, name, position, float(value), found.present))
        if not rates:
            raise NotApplicable(self.reason or self.nothing_to_do)
        lowest = min(r[3] for r in rates)
        options = []
        for rung in range(1, RUNGS + 1):
            factor = FACTOR ** rung
            if lowest / factor < FLOOR:
                break
            label = "; ".join(f"{name}={value / factor:g}" for _, name, _, value, _ in rates)
            options.append(Option(f"{label} (/{factor:g})",
                                  partial(self._divide, rates, factor)))
        self.factor = FACTOR
        self.choose(options)

    def _divide(self, rates: list[tuple[Owner, str, int | None, float, bool]],
                factor: float) -> None:
        self.factor = factor
        for owner, name, position, value, present in rates:
            why = "" if present else f"the default {value:g} / {factor:g}"
            owner.set(name, float(f"{value / factor:.12g}"), why, position=position)

    def _stepped_with(self, value: float) -> bool:
        if self.observed <= 0:
            return True
        if abs(value - self.observed) <= SAME_RATE * self.observed:
            return True
        self.reason = self.reason or (f"the run stepped at a learning rate of "
                                      f"{self.observed:g}, not {value:g}")
        return False

    def summary(self) -> str:
        return f"divide the learning rate by {self.factor:g} ({'; '.join(self.edits)})"
