"""training-args-conflict: the library names one value for an argument the script set.

TRL's configs and trainers and ``TrainingArguments`` reject settings that cannot work
together and say which value to use instead, e.g. (TRL 1.16) ``Padding-free training is yet
not supported for vision datasets. Please set `padding_free=False` in the `SFTConfig`.``,
``completion_only_loss=True is not compatible with formatting_func ... set
`completion_only_loss=False` in the `SFTConfig```, ``... Please set `sync_ref_model=False```.
The recipe makes that one change when the message names exactly one ``set X=V`` (no
alternative, no condition) and the script itself gave ``X`` another literal value: the
script's own choice is replaced, where it is defined, by the value the library requires.
A default the script never set, an advice with alternatives, and the settings whose change
alters what the data mean (``remove_unused_columns``, ``use_cpu``) are left to the advice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import libcst as cst

from autofix.categories.advice import Advice
from autofix.toolkit import Example, NotApplicable

from ._advice import AdviceRecipe

#: Settings whose advised value changes what the data or the machine mean: left as advice
#: (``remove_unused_columns=False`` hides untokenized data; ``use_cpu`` pins the device).
ADVICE_ONLY = frozenset(("remove_unused_columns", "use_cpu"))
_EVIDENCE = ("ValueError: Padding-free training is yet not supported for vision datasets. "
             "Please set `padding_free=False` in the `SFTConfig`.")


class ApplySetAdvice(AdviceRecipe):
    id = "advice-set-argument"
    category = "training-args-conflict"
    title = "give the argument the value the library's message requires"
    nothing_to_do = "no literal of the named argument to change"

    examples = (
        Example(
            before="from trl import SFTConfig\n"
                   "config = SFTConfig(output_dir='out', padding_free=True)\n",
            after="from trl import SFTConfig\n"
                  "config = SFTConfig(output_dir='out', padding_free=False)\n",
            evidence=_EVIDENCE,
        ),
        Example(  # the value comes from a dict given as **kwargs
            before="from trl import SFTConfig\n"
                   "hp = {'output_dir': 'out', 'padding_free': True}\n"
                   "config = SFTConfig(**hp)\n",
            after="from trl import SFTConfig\n"
                  "hp = {'output_dir': 'out', 'padding_free': False}\n"
                  "config = SFTConfig(**hp)\n",
            evidence=_EVIDENCE,
        ),
        Example(  # the script never set it: a default is the library's, left to advice
            before="from trl import SFTConfig\n"
                   "config = SFTConfig(output_dir='out')\n",
            evidence=_EVIDENCE,
        ),
        Example(  # a setting whose change alters what the data mean: advice only
            before="from transformers import TrainingArguments\n"
                   "args = TrainingArguments('out', remove_unused_columns=True)\n",
            evidence="ValueError: No columns in the dataset match the model's forward method "
                     "signature. You may need to set `remove_unused_columns=False` in "
                     "`TrainingArguments`.",
        ),
    )

    @classmethod
    def handles(cls, advice: Sequence[Advice], message: str) -> bool:
        return cls.the_change(advice) is not None

    @staticmethod
    def the_change(advice: Sequence[Advice]) -> Advice | None:
        """The one ``set X=V`` of ``advice``, else ``None``."""
        if len(advice) != 1:
            return None
        change = advice[0]
        if change.kind != "set" or not change.has_value or change.constraint or \
                not change.target or change.target in ADVICE_ONLY or \
                not re.fullmatch(r"[a-z_][a-z0-9_]*", change.target) or \
                not isinstance(change.value, (bool, int, float, str, type(None))):
            return None
        owner = change.owner or ""
        if owner and not re.fullmatch(r"\w*(?:TrainingArguments|Config)|args", owner):
            return None
        return change

    def make(self, tree: cst.Module) -> None:
        change = self.the_change(self.advice)
        assert change is not None and change.target is not None
        args = self.the_args()
        if not args.get(change.target).present:
            raise NotApplicable(f"the script does not set {change.target}: its default is "
                                f"the library's; set {change.target}={change.value!r} if "
                                "that suits the script")
        if not args.set(change.target, change.value, "as the library's message requires"):
            self.reason = f"{change.target} is already {change.value!r}"
