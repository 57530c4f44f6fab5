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
of the evaluation steps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import libcst as cst

from autofix.categories.advice import Advice
from autofix.toolkit import Example, Recipe, keyword

from ._training_args import (
    EVAL_STRATEGY,
    TRAINING_ARGS_PATTERN,
    int_value,
    is_true,
    set_keyword,
    splatted_dicts,
    strategy,
)

_MATCH = "--load_best_model_at_end requires the save and eval strategy to match"
_MULTIPLE = "--load_best_model_at_end requires the saving steps to be a round multiple"


class AlignSaveWithEval(Recipe):
    id = "training-args-strategies"
    category = "training-args-conflict"
    requires_words = (("TrainingArguments", "Seq2SeqTrainingArguments", "TFTrainingArguments"),)
    requires_imports = ("transformers",)
    title = "save checkpoints on the evaluation schedule, as load_best_model_at_end requires"
    nothing_to_do = ("no TrainingArguments(load_best_model_at_end=True) with mismatched "
                     "literal save/evaluation schedules")

    examples = (
        Example(
            before=("from transformers import TrainingArguments\n"
                    "args = TrainingArguments('out', eval_strategy='epoch', save_strategy='steps',"
                    " save_steps=500,\n    load_best_model_at_end=True)\n"),
            after=("from transformers import TrainingArguments\n"
                   "args = TrainingArguments('out', eval_strategy='epoch', save_strategy=\"epoch\","
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
                   "hp = dict(output_dir='out', eval_strategy='epoch', save_strategy=\"epoch\",\n"
                   "          load_best_model_at_end=True)\n"
                   "args = TrainingArguments(**hp)\n"),
            evidence=f"ValueError: {_MATCH}, but found",
        ),
        Example(  # **hp and a keyword on the call too: which one wins is not read
            before=("from transformers import TrainingArguments\n"
                    "hp = dict(save_strategy='steps', load_best_model_at_end=True)\n"
                    "args = TrainingArguments('out', eval_strategy='epoch', **hp)\n"),
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

    def visit_Module(self, node: cst.Module) -> None:
        self.dicts = splatted_dicts(self, node)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if not (self.is_qualified(original_node.func, TRAINING_ARGS_PATTERN)
                or original_node in self.dicts) \
                or not is_true(updated_node, "load_best_model_at_end"):
            return updated_node
        evaluate = strategy(updated_node, EVAL_STRATEGY, "no")
        save = strategy(updated_node, ("save_strategy",), "steps")
        if evaluate is None or save is None or save == "best":
            self.reason = "the save or evaluation strategy is not a literal autofix can read"
            return updated_node
        if evaluate == "no" and save != "no":
            name = next((n for n in EVAL_STRATEGY if keyword(updated_node, n) is not None),
                        self.eval_name())
            updated_node = set_keyword(updated_node, name, cst.SimpleString(f'"{save}"'))
            steps = keyword(updated_node, "save_steps")
            if save == "steps" and steps is not None and keyword(updated_node, "eval_steps") \
                    is None:
                updated_node = set_keyword(updated_node, "eval_steps", steps.value)
            self.changed(original_node, f"evaluate on the save schedule ({name}=\"{save}\")")
            return updated_node
        if evaluate != save:
            updated_node = set_keyword(updated_node, "save_strategy",
                                       cst.SimpleString(f'"{evaluate}"'))
            self.changed(original_node, f"save_strategy=\"{evaluate}\", the evaluation strategy")
            save = evaluate
        if evaluate == "steps":
            every = int_value(updated_node, "eval_steps")
            saved = int_value(updated_node, "save_steps")
            if every and saved and saved % every:
                new = math.ceil(saved / every) * every
                updated_node = set_keyword(updated_node, "save_steps", cst.Integer(str(new)))
                self.changed(original_node, f"save_steps={new}, a multiple of eval_steps={every}")
        return updated_node

    def eval_name(self) -> str:
        """``eval_strategy`` from transformers 4.41.0, ``evaluation_strategy`` before."""
        version = self.rc.versions.get("transformers", "")
        parts = [int(p) for p in version.split(".")[:2] if p.isdigit()]
        return "evaluation_strategy" if len(parts) == 2 and tuple(parts) < (4, 41) \
            else "eval_strategy"
