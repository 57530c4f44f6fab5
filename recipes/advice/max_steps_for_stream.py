"""training-args-conflict: a training stream without a length and no ``max_steps``.

``Trainer.__init__`` (transformers 5.24) raises ``The train_dataset does not implement
__len__, so the number of training steps cannot be inferred; max_steps has to be
specified.`` (``Trainer.train`` raises ``args.max_steps must be set to a positive value if
dataloader does not have a length``): a ``datasets.IterableDataset`` (``streaming=True``)
has no length, so epochs cannot be counted. The library names the argument, not its value.
The recipe derives it from the script's own settings only when they give the number of
rows (a ``.take(N)`` on the stream): ``max_steps = ceil(N / (per_device_train_batch_size x
gradient_accumulation_steps)) x num_train_epochs`` for one process. Otherwise it declines,
and its reason gives that formula with the script's values for the user to fill in.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import libcst as cst

from autofix.categories.advice import Advice
from autofix.toolkit import Example, NotApplicable, argument

from ._advice import AdviceRecipe, flat

_EVIDENCE = ("ValueError: The train_dataset does not implement __len__, so the number of "
             "training steps cannot be inferred; max_steps has to be specified.")
_STREAM = ("from datasets import load_dataset\n"
           "from transformers import Trainer, TrainingArguments\n"
           "stream = load_dataset('json', data_files='t.jsonl', split='train', "
           "streaming=True)\n")


class DeriveMaxSteps(AdviceRecipe):
    id = "max-steps-for-stream"
    category = "training-args-conflict"
    title = "bound the training on a stream with max_steps, from the rows it yields"
    requires_words = (("TrainingArguments", "SFTConfig", "DPOConfig", "GRPOConfig",
                       "RewardConfig", "Seq2SeqTrainingArguments"),)
    nothing_to_do = "no TrainingArguments call to give max_steps"

    examples = (
        Example(  # the stream is cut to 640 rows: 640 / (16 x 2) x 3 epochs
            before=_STREAM + "train = stream.take(640)\n"
                             "args = TrainingArguments('o', per_device_train_batch_size=16,\n"
                             "                         gradient_accumulation_steps=2, "
                             "num_train_epochs=3)\n"
                             "Trainer(model=model, args=args, train_dataset=train)\n",
            after=_STREAM + "train = stream.take(640)\n"
                            "args = TrainingArguments('o', per_device_train_batch_size=16,\n"
                            "                         gradient_accumulation_steps=2, "
                            "num_train_epochs=3,\n"
                            "                         max_steps=60)\n"
                            "Trainer(model=model, args=args, train_dataset=train)\n",
            evidence=_EVIDENCE,
        ),
        Example(  # rows unknown: no value is invented
            before=_STREAM + "args = TrainingArguments('o', per_device_train_batch_size=16)\n"
                             "Trainer(model=model, args=args, train_dataset=stream)\n",
            evidence=_EVIDENCE,
        ),
    )

    @classmethod
    def handles(cls, advice: Sequence[Advice], message: str) -> bool:
        return any(a.target == "max_steps" and a.kind in ("specify", "set")
                   for a in flat(advice))

    def make(self, tree: cst.Module) -> None:
        args = self.the_args()
        batch = args.value("per_device_train_batch_size", default=8)
        accumulation = args.value("gradient_accumulation_steps", default=1)
        epochs = args.value("num_train_epochs", default=3.0)
        if not all(isinstance(v, (int, float)) and v > 0 for v in (batch, accumulation, epochs)):
            raise NotApplicable("the batch size, accumulation or epochs are not literals "
                                "autofix can read")
        assert isinstance(batch, (int, float)) and isinstance(accumulation, (int, float)) \
            and isinstance(epochs, (int, float))
        per_step = int(batch) * int(accumulation)
        formula = (f"max_steps = ceil(rows / {per_step}) x {epochs:g} "
                   f"(per_device_train_batch_size={batch} x gradient_accumulation_steps="
                   f"{accumulation}, num_train_epochs={epochs:g}, one process)")
        rows = self.rows()
        if rows is None:
            raise NotApplicable("the training data is a stream without a length and the "
                                "script does not say how many rows it yields: set "
                                f"{formula} in TrainingArguments")
        steps = math.ceil(rows / per_step) * math.ceil(epochs)
        args.set("max_steps", steps,
                          f"{rows} rows / {per_step} per step x {epochs:g} epochs")

    def rows(self) -> int | None:
        """The number of rows the training stream yields, when the script cuts it with a
        literal ``.take(N)``; ``None`` when the script does not say."""
        for trainer in self.at_failure(self.trainer_calls()):
            train = argument(trainer, "train_dataset", 3)
            pending = [train] if train is not None else []
            seen = 0
            while pending and seen < 30:
                seen += 1
                expr = pending.pop()
                if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
                    if expr.func.attr.value == "take" and expr.args and \
                            isinstance(expr.args[0].value, cst.Integer):
                        return int(expr.args[0].value.evaluated_value)
                    pending.append(expr.func.value)
                elif isinstance(expr, cst.Name):
                    pending += [v for v in self.program.values(expr)
                                if isinstance(v, cst.BaseExpression) and v is not expr]
        return None
