"""HfArgumentParser refusing a renamed field: what the message says (which item, which name
to pass instead) and which category it is (api-drift only for a renamed field)."""

from __future__ import annotations

import pytest

from autofix.categories.renames import renamed_in_parser_refusal
from autofix.categories.tracebacks import parse_traceback
from autofix.loop.diagnosis import classify

pytestmark = pytest.mark.fast
ARGS = "ValueError: Some specified arguments are not used by the HfArgumentParser: "
KEYS = "ValueError: Some keys are not used by the HfArgumentParser: "


@pytest.mark.parametrize(("message", "expected"), [
    (ARGS + "['--evaluation_strategy', 'steps']", [("--evaluation_strategy", "--eval_strategy")]),
    (ARGS + "['--eval_strategy', 'epoch']", [("--eval_strategy", "--evaluation_strategy")]),
    (ARGS + "['--evaluation-strategy=steps', '--lr', '1']",
     [("--evaluation-strategy=steps", "--eval-strategy=steps")]),
    (ARGS + "['--max_seq_length', '512']", [("--max_seq_length", "--max_length")]),
    (KEYS + "['evaluation_strategy', 'foo']", [("evaluation_strategy", "eval_strategy")]),
    # an option's value that happens to be a field name is not an option
    (ARGS + "['--report', 'evaluation_strategy']", []),
    # tokenizer= is a Trainer keyword, no field any parser reads
    (ARGS + "['--tokenizer', 'bert']", []),
    (ARGS + "['--learning_rat', '1e-4']", []),
    ("TypeError: __init__() got an unexpected keyword argument 'evaluation_strategy'", []),
])
def test_renamed_fields_in_the_refusal(message: str, expected: list[tuple[str, str]]) -> None:
    assert [(o.given, o.replacement) for o in renamed_in_parser_refusal(message)] == expected


def _category(message: str) -> str:
    exc = parse_traceback(
        "Traceback (most recent call last):\n"
        '  File "/u/train.py", line 3, in <module>\n'
        "    parser.parse_args_into_dataclasses()\n"
        '  File "/v/site-packages/transformers/hf_argparser.py", line 354, in '
        "parse_args_into_dataclasses\n"
        '    raise ValueError(f"Some specified arguments are not used by the HfArgumentParser: '
        '{remaining_args}")\n' + message + "\n")
    assert exc is not None
    return classify(exc, None).id


def test_a_renamed_option_is_api_drift_a_typo_is_not() -> None:
    assert _category(ARGS + "['--evaluation_strategy', 'steps']") == "api-drift"
    assert _category(ARGS + "['--learning_rat', '1e-4']") != "api-drift"


def test_a_typo_gets_the_parsers_closest_option_from_the_real_parser() -> None:
    """A real refusal by a real HfArgumentParser: the facts at the failure hold the
    parser's options, and the advice names the one the typo was meant to be."""
    import json

    from transformers import HfArgumentParser, TrainingArguments

    from autofix.categories.failure import Failure
    from autofix.categories.registry import get_category
    from autofix.run.child.events import describe_exception
    from autofix.run.probe_events import exception_from_json

    try:
        HfArgumentParser(TrainingArguments).parse_args_into_dataclasses(
            args=["--output_dir", "o", "--learnin_rate", "1e-4", "--lr_schedular_type", "cosine"])
    except ValueError as exc:
        info = exception_from_json(json.loads(json.dumps(describe_exception(exc))))
    assert classify(info, None).id == "unknown-parser-option"
    advise = get_category("unknown-parser-option").advise
    assert advise is not None
    assert advise(Failure(info)) == (
        "HfArgumentParser has no field for --learnin_rate (did you mean --learning_rate?), "
        "--lr_schedular_type (did you mean --lr_scheduler_type?), given on the command line: "
        "correct or remove it")
