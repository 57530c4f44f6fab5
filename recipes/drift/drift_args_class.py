"""args-class-mismatch: a trainer given an arguments class it is not paired with.

``Seq2SeqTrainer`` reads ``self.args.generation_config`` (and ``predict_with_generate``,
``generation_max_length``...) in its own code, which only ``Seq2SeqTrainingArguments``
has: given the plain ``TrainingArguments`` it raises ``AttributeError: 'TrainingArguments'
object has no attribute 'generation_config'`` before training. TRL's ``DPOTrainer`` reads
``DPOConfig``'s fields the same way. The API check finds the pair before any run (the
trainer's ``args`` annotation or the library's class named like it, and the fields the
trainer's own code reads that the given class lacks: ``autofix/run/child/overrides.py``).

The fix is made where the arguments are built: the same call with the paired class (the
import added with LibCST's ``AddImportsVisitor``, the old one dropped when unused), and the
old class's defaults where the paired class's differ, so nothing else about the run
changes (``DPOConfig`` defaults to ``bf16`` and a learning rate of 1e-6). Without the
check's facts (a traceback), the paired class is the library's class named like the trainer
(``Seq2SeqTrainer`` -> ``transformers.Seq2SeqTrainingArguments``, ``XTrainer`` ->
``trl.XConfig``).
"""

from __future__ import annotations

import re

import libcst as cst

from autofix.toolkit import Example, NotApplicable, patterns
from autofix.toolkit.values import Values

from .._drift import TrainerDrift

_MISSING = re.compile(r"'(\w+)' object has no attribute '(\w+)'")


def _guessed_pair(trainer: str) -> str:
    """The paired class of a trainer's qualified name, by the libraries' naming."""
    top, name = trainer.split(".", 1)[0], trainer.rsplit(".", 1)[1]
    prefix = name[: -len("Trainer")] if name.endswith("Trainer") else ""
    if not prefix:
        return ""
    return f"transformers.{prefix}TrainingArguments" if top == "transformers" \
        else f"{top}.{prefix}Config"


class DriftArgsClass(TrainerDrift):
    id = "drift-args-class"
    category = "args-class-mismatch"
    title = "build the trainer's arguments with the class the trainer is paired with"
    requires_words = (("args", "Arguments", "Config"),)

    examples = (
        Example(
            before=("from transformers import Seq2SeqTrainer, TrainingArguments\n"
                    "args = TrainingArguments('out', predict_with_generate=True)\n"
                    "trainer = Seq2SeqTrainer(model=model, args=args)\n"),
            after=("from transformers import Seq2SeqTrainer, Seq2SeqTrainingArguments\n"
                   "args = Seq2SeqTrainingArguments('out', predict_with_generate=True)\n"
                   "trainer = Seq2SeqTrainer(model=model, args=args)\n"),
            evidence="AttributeError: 'TrainingArguments' object has no attribute "
                     "'generation_config'",
            facts=(("pairs_with", "transformers.Seq2SeqTrainingArguments"),
                   ("trainer", "transformers.Seq2SeqTrainer"), ("given", "TrainingArguments"),
                   ("keeps", "")),
        ),
        Example(  # positional args, module attribute style, a traceback (no facts)
            before=("import transformers\n"
                    "def build(model):\n"
                    "    args = transformers.TrainingArguments('out')\n"
                    "    return transformers.Seq2SeqTrainer(model, args)\n"),
            after=("import transformers\n"
                   "def build(model):\n"
                   "    args = transformers.Seq2SeqTrainingArguments('out')\n"
                   "    return transformers.Seq2SeqTrainer(model, args)\n"),
            evidence="AttributeError: 'TrainingArguments' object has no attribute "
                     "'generation_config'",
        ),
        Example(  # DPOConfig's defaults differ: the old ones are kept
            before=("from transformers import TrainingArguments\n"
                    "from trl import DPOTrainer\n"
                    "cfg = TrainingArguments('out', learning_rate=1e-3)\n"
                    "DPOTrainer(model, args=cfg, train_dataset=d)\n"),
            after=("from trl import DPOConfig, DPOTrainer\n"
                   "cfg = DPOConfig('out', learning_rate=1e-3, bf16=False)\n"
                   "DPOTrainer(model, args=cfg, train_dataset=d)\n"),
            evidence="AttributeError: 'TrainingArguments' object has no attribute "
                     "'padding_free'",
            facts=(("pairs_with", "trl.DPOConfig"), ("trainer", "trl.DPOTrainer"),
                   ("given", "TrainingArguments"),
                   ("keeps", "learning_rate=5e-05, bf16=False")),
        ),
        Example(  # already paired
            before=("from transformers import Seq2SeqTrainer, Seq2SeqTrainingArguments\n"
                    "args = Seq2SeqTrainingArguments('out')\n"
                    "trainer = Seq2SeqTrainer(model=model, args=args)\n"),
            evidence="AttributeError: 'TrainingArguments' object has no attribute "
                     "'generation_config'",
        ),
        Example(  # another object's missing attribute
            before=("from transformers import Trainer, TrainingArguments\n"
                    "trainer = Trainer(model=model, args=TrainingArguments('out'))\n"),
            evidence="AttributeError: 'BertModel' object has no attribute 'generation_config'",
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        self.values = Values(self)
        diag = self.rc.diagnosis
        missing = _MISSING.search(diag.evidence)
        if missing is None:
            raise NotApplicable("the error is not an arguments object missing an attribute")
        given = diag.fact("given") or missing.group(1)
        pair, trainer = diag.fact("pairs_with"), diag.fact("trainer")
        self.reason = f"no trainer here gets {given}(...) built in this file"
        found: set[cst.Call] = set()
        for call in self.program.calls:
            names = self.qualified(call.func)
            if trainer:
                if trainer not in names and not self.is_trainer(call, re.escape(trainer)):
                    continue
                target = pair
            else:
                if not self.is_trainer(call):
                    continue
                candidates = sorted(n for n in names if n.endswith("Trainer"))
                target = _guessed_pair(candidates[0]) if candidates else ""
            if not target:
                continue
            built = self.args_constructions(call)
            if isinstance(built, str):
                self.reason = built
                continue
            for construction in built:
                if construction in found or not self.is_qualified(construction.func,
                                                                 patterns.ANY_TRAINING_ARGS) \
                        or not any(n.endswith(f".{given}") for n in
                                   self.qualified(construction.func)):
                    continue
                swap, what = self.swap_class(construction, target, diag.fact("keeps"))
                self.plan_edit(construction, swap, what)
                found.add(construction)
        if not found:
            raise NotApplicable(self.reason)
