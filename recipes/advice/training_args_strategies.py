"""training-args-conflict: ``load_best_model_at_end`` with save and evaluation schedules
that do not line up.

``TrainingArguments.__post_init__`` (transformers 5.24 ``_validate_args``, 4.57.6
``__post_init__``) raises ``--load_best_model_at_end requires the save and eval strategy
to match ...`` and ``... requires the saving steps to be a (round) multiple of the
evaluation steps, but found 300, which is not a round multiple of 200``: the best model
can only be reloaded from a checkpoint saved right after an evaluation. The recipe does
what the message asks, on the arguments it names: the save strategy follows the
evaluation strategy (when nothing is evaluated, evaluation follows the save schedule
instead, so the best model can still be chosen), and save steps become the next multiple
of the evaluation steps. The settings are read and written where the script defines them
(:mod:`autofix.toolkit.values`): the call's keywords, the dict given as ``**hp``, the
constants and defaults they come from, the ``sys.argv`` defaults a run_glue-style script
gives ``HfArgumentParser``; a setting the user passes on the command line is named.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import libcst as cst

from autofix.categories.advice import Advice
from autofix.toolkit import Example, NotApplicable, patterns
from autofix.toolkit.scope import PlannedEdits
from autofix.toolkit.values import ArgvOwner, NotFollowed, Owner, Values

from .._training_args import EVAL_STRATEGY

_MATCH = "--load_best_model_at_end requires the save and eval strategy to match"
_MULTIPLE = "--load_best_model_at_end requires the saving steps to be a round multiple"
#: ``TrainingArguments`` defaults (transformers 4.41 to 5.x).
_DEFAULTS = {"save_strategy": "steps", "save_steps": 500, "eval_strategy": "no"}


class AlignSaveWithEval(PlannedEdits):
    id = "training-args-strategies"
    category = "training-args-conflict"
    requires_words = (("TrainingArguments", "Seq2SeqTrainingArguments", "TFTrainingArguments"),)
    requires_imports = ("transformers",)
    title = "save checkpoints on the evaluation schedule, as load_best_model_at_end requires"
    nothing_to_do = ("no TrainingArguments with load_best_model_at_end=True and save/evaluation "
                     "schedules that differ")

    examples = (
        Example(
            before=("from transformers import TrainingArguments\n"
                    "args = TrainingArguments('out', eval_strategy='epoch', save_strategy='steps',"
                    " save_steps=500,\n    load_best_model_at_end=True)\n"),
            after=("from transformers import TrainingArguments\n"
                   "args = TrainingArguments('out', eval_strategy='epoch', save_strategy='epoch',"
                   " save_steps=500,\n    load_best_model_at_end=True)\n"),
            evidence=f"ValueError: {_MATCH}, except when --save_strategy=\"best\", but found",
        ),
        Example(  # save strategy left at its default ("steps"); IntervalStrategy; old name
            before=("from transformers import IntervalStrategy, TrainingArguments as TA\n"
                    "def make(out):\n"
                    "    return TA(out, evaluation_strategy=IntervalStrategy.EPOCH,\n"
                    "              load_best_model_at_end=True)\n"),
            after=("from transformers import IntervalStrategy, TrainingArguments as TA\n"
                   "def make(out):\n"
                   "    return TA(out, evaluation_strategy=IntervalStrategy.EPOCH,\n"
                   "              load_best_model_at_end=True, save_strategy=\"epoch\")\n"),
            evidence=f"ValueError: {_MATCH}, but found",
        ),
        Example(  # nothing evaluated: evaluation follows the save schedule
            before=("from transformers import TrainingArguments\n"
                    "args = TrainingArguments('out', save_strategy='steps', save_steps=50,\n"
                    "                         load_best_model_at_end=True)\n"),
            after=("from transformers import TrainingArguments\n"
                   "args = TrainingArguments('out', save_strategy='steps', save_steps=50,\n"
                   "                         load_best_model_at_end=True, "
                   "eval_strategy=\"steps\",\n"
                   "                         eval_steps=50)\n"),
            evidence=f"ValueError: {_MATCH}, but found",
        ),
        Example(  # steps: save_steps becomes the next multiple of eval_steps
            before=("from transformers import TrainingArguments\n"
                    "args = TrainingArguments('out', eval_strategy='steps', eval_steps=200,\n"
                    "    save_steps=300, load_best_model_at_end=True)\n"),
            after=("from transformers import TrainingArguments\n"
                   "args = TrainingArguments('out', eval_strategy='steps', eval_steps=200,\n"
                   "    save_steps=400, load_best_model_at_end=True)\n"),
            evidence=f"ValueError: {_MULTIPLE} of the evaluation steps, but found 300, which "
                     "is not a round multiple of 200.",
        ),
        Example(  # the arguments in a dict(...) given as **hp: the dict is edited
            before=("from transformers import TrainingArguments\n"
                    "hp = dict(output_dir='out', eval_strategy='epoch', save_strategy='steps',\n"
                    "          load_best_model_at_end=True)\n"
                    "args = TrainingArguments(**hp)\n"),
            after=("from transformers import TrainingArguments\n"
                   "hp = dict(output_dir='out', eval_strategy='epoch', save_strategy='epoch',\n"
                   "          load_best_model_at_end=True)\n"
                   "args = TrainingArguments(**hp)\n"),
            evidence=f"ValueError: {_MATCH}, but found",
        ),
        Example(  # **hp and a keyword on the call too: each read where it is given
            before=("from transformers import TrainingArguments\n"
                    "hp = dict(save_strategy='steps', load_best_model_at_end=True)\n"
                    "args = TrainingArguments('out', eval_strategy='epoch', **hp)\n"),
            after=("from transformers import TrainingArguments\n"
                   "hp = dict(save_strategy='epoch', load_best_model_at_end=True)\n"
                   "args = TrainingArguments('out', eval_strategy='epoch', **hp)\n"),
            evidence=f"ValueError: {_MATCH}, but found",
        ),
        Example(  # run_glue style: the defaults HfArgumentParser parses from sys.argv
            before=("import sys\nfrom transformers import HfArgumentParser, TrainingArguments\n"
                    "if len(sys.argv) == 1:\n"
                    "    sys.argv += ['--output_dir', 'o', '--eval_strategy', 'epoch',\n"
                    "                 '--save_strategy', 'steps', '--save_steps', '20',\n"
                    "                 '--load_best_model_at_end']\n"
                    "(args,) = HfArgumentParser(TrainingArguments)"
                    ".parse_args_into_dataclasses()\n"),
            after=("import sys\nfrom transformers import HfArgumentParser, TrainingArguments\n"
                   "if len(sys.argv) == 1:\n"
                   "    sys.argv += ['--output_dir', 'o', '--eval_strategy', 'epoch',\n"
                   "                 '--save_strategy', 'epoch',\n"
                   "                 '--load_best_model_at_end']\n"
                   "(args,) = HfArgumentParser(TrainingArguments)"
                   ".parse_args_into_dataclasses()\n"),
            evidence=f"ValueError: {_MATCH}, but found",
        ),
        Example(  # the strategy from a constant
            before=("from transformers import TrainingArguments\n"
                    "SAVE = 'steps'\n"
                    "args = TrainingArguments('out', eval_strategy='epoch', save_strategy=SAVE,\n"
                    "                         load_best_model_at_end=True)\n"),
            after=("from transformers import TrainingArguments\n"
                   "SAVE = 'epoch'\n"
                   "args = TrainingArguments('out', eval_strategy='epoch', save_strategy=SAVE,\n"
                   "                         load_best_model_at_end=True)\n"),
            evidence=f"ValueError: {_MATCH}, but found",
        ),
        Example(  # a strategy autofix cannot read
            before=("from transformers import TrainingArguments\n"
                    "args = TrainingArguments('out', eval_strategy=pick(), save_strategy='steps',\n"
                    "                         load_best_model_at_end=True)\n"),
            evidence=f"ValueError: {_MATCH}, but found",
        ),
        Example(  # already consistent
            before=("from transformers import TrainingArguments\n"
                    "args = TrainingArguments('out', eval_strategy='epoch', save_strategy='epoch',"
                    " load_best_model_at_end=True)\n"),
            evidence=f"ValueError: {_MATCH}, but found",
        ),
        Example(  # no load_best_model_at_end: the schedules may differ
            before=("from transformers import TrainingArguments\n"
                    "args = TrainingArguments('out', eval_strategy='epoch', save_steps=10)\n"),
            evidence=f"ValueError: {_MATCH}, but found",
        ),
    )

    @classmethod
    def handles(cls, advice: Sequence[Advice], message: str) -> bool:
        """The library's message asks for save and evaluation schedules that match."""
        return "--load_best_model_at_end requires the sav" in message

    def prepare(self, tree: cst.Module) -> None:
        values = Values(self)
        for owner in values.owners(patterns.TRAINING_ARGS):
            try:
                if owner.value("load_best_model_at_end", default=False) is True:
                    self._align(owner)
            except NotFollowed as declined:
                self.reason = str(declined)
        if not self.edits:
            raise NotApplicable(self.reason or self.nothing_to_do)

    def _align(self, owner: Owner) -> None:
        """Plan the edits that put ``owner``'s save and evaluation schedules in line.
        Raises :class:`NotFollowed` when a schedule cannot be read or written."""
        evaluate = _strategy(_read(owner, EVAL_STRATEGY, _DEFAULTS["eval_strategy"]))
        save = _strategy(_read(owner, ("save_strategy",), _DEFAULTS["save_strategy"]))
        if evaluate is None or save is None or save == "best":
            self.reason = "the save or evaluation strategy is not a strategy autofix can read"
            return
        if evaluate == "no" and save != "no":
            found = owner.get(*EVAL_STRATEGY)
            name = found.name if found.present else self.eval_name()
            owner.set(name, save, "evaluate on the save schedule")
            if save == "steps" and not owner.get("eval_steps").present:
                owner.set("eval_steps", owner.value("save_steps",
                                                    default=_DEFAULTS["save_steps"]),
                          "the save steps")
            return
        if evaluate != save:
            owner.set("save_strategy", evaluate, "the evaluation strategy")
            if isinstance(owner, ArgvOwner) and evaluate != "steps":
                owner.remove("save_steps", "not read once saves follow the evaluation")
            return
        if evaluate == "steps":
            every = owner.value("eval_steps", default=None)
            saved = owner.value("save_steps", default=_DEFAULTS["save_steps"])
            if isinstance(every, int) and isinstance(saved, int) and every > 0 \
                    and saved % every:
                new = math.ceil(saved / every) * every
                owner.set("save_steps", new, f"a multiple of eval_steps={every}")

    def eval_name(self) -> str:
        """``eval_strategy`` from transformers 4.41.0, ``evaluation_strategy`` before."""
        version = self.rc.versions.get("transformers", "")
        parts = [int(p) for p in version.split(".")[:2] if p.isdigit()]
        return "evaluation_strategy" if len(parts) == 2 and tuple(parts) < (4, 41) \
            else "eval_strategy"


def _read(owner: Owner, names: Sequence[str], default: object) -> object:
    """A schedule setting's value (``default`` when absent), read from the user's command
    line too: a fix there is named, not made (:meth:`Owner.set` raises). Raises
    :class:`NotFollowed` when it is not a literal."""
    found = owner.get(*names)
    if found.command_line is not None:
        return found.command_line.value
    return owner.value(*names, default=default)


def _strategy(value: object) -> str | None:
    """A strategy as ``TrainingArguments`` reads it (``"EPOCH"``, ``IntervalStrategy.EPOCH``
    -> ``"epoch"``); ``None`` for anything that is not a string."""
    return value.lower() if isinstance(value, str) else None
