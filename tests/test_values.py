"""The value-source service (``autofix.toolkit.values``): settings read and written where
the script defines them, in the forms users write."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst
import pytest

from autofix.toolkit import apply_recipe
from autofix.toolkit.patterns import TRAINING_ARGS
from autofix.toolkit.scope import PlannedEdits
from autofix.toolkit.values import UNKNOWN, Values
from autofix.types import Applied, Diagnosis, NotApplicable, RecipeContext

Action = Callable[[Values], object]


class _Harness(PlannedEdits):
    """Runs one action on the service; what it returns is kept on the class."""

    abstract = True
    action: Action
    seen: list[object] = []

    def prepare(self, tree: cst.Module) -> None:
        type(self).seen.append(type(self).action(Values(self)))


def run(source: str, action: Action, args: tuple[str, ...] = ()) -> tuple[str, object]:
    """The source after ``action`` (unchanged when it planned nothing) and its result;
    raises ``ValueError`` with the reason when the action declined."""
    harness = type("H", (_Harness,), {"abstract": True, "action": staticmethod(action),
                                      "seen": []})
    rc = RecipeContext(Diagnosis("training-args-conflict", "ValueError"),
                       {"transformers": "5.24.0"}, args=args)
    outcome = apply_recipe(harness, source, rc)
    result = harness.seen[-1] if harness.seen else None
    if isinstance(outcome, NotApplicable) and not harness.seen:
        raise ValueError(outcome.reason)
    return (outcome.source if isinstance(outcome, Applied) else source), result


GLUE = '''import sys
from dataclasses import dataclass, field
from transformers import HfArgumentParser, TrainingArguments


@dataclass
class DataArguments:
    max_seq_length: int = field(default=64)


def main():
    parser = HfArgumentParser((DataArguments, TrainingArguments))
    data_args, training_args = parser.parse_args_into_dataclasses()
    return training_args


if __name__ == "__main__":
    if len(sys.argv) == 1:
        sys.argv += ["--output_dir", "out",
                     "--eval_strategy", "epoch", "--save_strategy", "steps", "--save_steps", "20",
                     "--load_best_model_at_end", "--report_to", "none"]
    main()
'''


def _training_args(values: Values) -> list[object]:
    return values.owners(TRAINING_ARGS)


def test_hf_argument_parser_settings_are_read_from_the_sys_argv_defaults() -> None:
    def read(values: Values) -> object:
        (owner,) = values.owners(TRAINING_ARGS)
        return (owner.value("save_strategy"), owner.value("save_steps"),
                owner.value("load_best_model_at_end"), owner.value("eval_steps", default=7),
                owner.get("eval_strategy", "evaluation_strategy").name)

    _, result = run(GLUE, read)
    assert result == ("steps", 20, True, 7, "eval_strategy")


def test_argv_setting_rewritten_and_removed_in_the_list() -> None:
    def fix(values: Values) -> None:
        (owner,) = values.owners(TRAINING_ARGS)
        owner.set("save_strategy", "epoch")
        owner.remove("save_steps")

    after, _ = run(GLUE, fix)
    assert '"--eval_strategy", "epoch", "--save_strategy", "epoch",\n' in after
    assert "--save_steps" not in after and '"20"' not in after
    assert after.count('"--load_best_model_at_end", "--report_to", "none"]') == 1


def test_argv_setting_added_and_bare_flag_turned_off() -> None:
    def fix(values: Values) -> None:
        (owner,) = values.owners(TRAINING_ARGS)
        owner.set("metric_for_best_model", "accuracy")
        owner.set("load_best_model_at_end", False)

    after, _ = run(GLUE, fix)
    assert '"--report_to", "none", "--metric_for_best_model", "accuracy"]' in after
    assert "--load_best_model_at_end" not in after


def test_a_flag_on_the_users_command_line_is_named_not_edited() -> None:
    def fix(values: Values) -> None:
        (owner,) = values.owners(TRAINING_ARGS)
        owner.set("save_strategy", "epoch")

    with pytest.raises(ValueError, match=r"command line \(--save_strategy steps\).*"
                                          r"--save_strategy epoch"):
        run(GLUE, fix, args=("--output_dir", "o", "--save_strategy", "steps"))


def test_guarded_defaults_do_not_apply_when_the_user_passes_arguments() -> None:
    def read(values: Values) -> object:
        (owner,) = values.owners(TRAINING_ARGS)
        return owner.get("save_steps").present

    _, result = run(GLUE, read, args=("--output_dir", "o"))
    assert result is False


CALLS = '''from transformers import TrainingArguments
SAVE = "steps"
hp = {"eval_strategy": "epoch", "save_steps": 20}


def build(out, save=SAVE):
    return TrainingArguments(out, save_strategy=save, **hp)


args = build("out")
'''


def test_call_settings_followed_to_their_literal_and_the_splatted_dict() -> None:
    def fix(values: Values) -> object:
        (owner,) = values.owners(TRAINING_ARGS)
        read = (owner.value("save_strategy"), owner.value("eval_strategy"),
                owner.value("output_dir", position=0))
        owner.set("save_strategy", "epoch")
        owner.remove("save_steps")
        owner.set("metric_for_best_model", "loss")
        return read

    after, read = run(CALLS, fix)
    assert read == ("steps", "epoch", "out")
    assert 'SAVE = "epoch"' in after
    assert 'hp = {"eval_strategy": "epoch", "metric_for_best_model": "loss"}' in after


def test_a_computed_value_is_unknown_with_its_reason() -> None:
    source = ("from transformers import TrainingArguments\nimport os\n"
              "args = TrainingArguments('o', save_strategy=os.environ['S'])\n")

    def read(values: Values) -> object:
        (owner,) = values.owners(TRAINING_ARGS)
        found = owner.get("save_strategy")
        return found.value, found.reason

    _, (value, reason) = run(source, read)  # type: ignore[misc]
    assert value is UNKNOWN and "save_strategy" in reason


def test_owner_of_the_trainers_args_through_the_parse_element() -> None:
    source = GLUE.replace("    return training_args\n",
                          "    from transformers import Trainer\n"
                          "    Trainer(model=None, args=training_args)\n")

    def read(values: Values) -> object:
        call = next(c for c in values.program.calls if cst.ensure_type(c, cst.Call)
                    and getattr(c.func, "value", "") == "Trainer")
        args = next(a.value for a in call.args if a.keyword and a.keyword.value == "args")
        return [type(o).__name__ for o in values.owners_of(args, TRAINING_ARGS)]

    _, result = run(source, read)
    assert result == ["ArgvOwner"]


def test_init_parameter_followed_to_the_instantiation() -> None:
    source = ('''import torch
class T:
    def __init__(self, *a, weights=None, **kw):
        self.weights = weights
    def loss(self, x):
        return torch.nn.functional.cross_entropy(x, x, weight=self.weights)
w = torch.from_numpy(arr)
T(1, weights=w)
''')

    def read(values: Values) -> object:
        attr = next(n for n in values.program.calls if getattr(n.func, "attr", None)
                    and n.func.attr.value == "cross_entropy")
        weight = next(a.value for a in attr.args if a.keyword and a.keyword.value == "weight")
        return [cst.Module([]).code_for_node(v) for v in values.origins(weight)]

    _, result = run(source, read)
    assert result == ["torch.from_numpy(arr)"]
