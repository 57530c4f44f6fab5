"""Every qualified-name pattern lives in ``autofix/toolkit/patterns.py``: a recipe module
that spells a library call's regex of its own (``r"torch\\.nn\\.Linear"``) fails here, and
the shared patterns match the names they are documented to match."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from autofix.toolkit import patterns

from .conftest import ROOT

#: The libraries (and standard modules) recipes match calls of by qualified name.
LIBRARIES = ("torch", "transformers", "datasets", "trl", "peft", "sklearn", "numpy",
             "tensorflow", "keras", "tf_keras", "builtins", "os", "json", "pandas",
             "accelerate", "evaluate")
#: A string that reads as a qualified-name regex: a library's name (after ``(``, ``(?:``
#: or ``^``) followed by an escaped dot, an optional group or an alternative.
LOOKS_QUALIFIED = re.compile(r"^\^?(\((\?:)?)*(" + "|".join(LIBRARIES) + r")(\\\.|\(\\\.|\||\))")


def own_patterns(tree: ast.Module) -> list[tuple[int, str]]:
    """The (line, text) of each string constant of ``tree`` that looks like a qualified-name
    regex (:data:`LOOKS_QUALIFIED`), the constant parts of f-strings included."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                LOOKS_QUALIFIED.match(node.value):
            found.append((node.lineno, node.value))
    return found


def test_no_recipe_spells_a_qualified_name_pattern_of_its_own() -> None:
    """A recipe imports the pattern from ``autofix.toolkit.patterns`` (one pattern per
    library call, named and documented there)."""
    found = [f"{path.relative_to(ROOT)}:{line}: {text[:60]}"
             for path in sorted((ROOT / "recipes").rglob("*.py"))
             for line, text in own_patterns(ast.parse(path.read_text(encoding="utf-8")))]
    assert found == [], "move these into autofix/toolkit/patterns.py:\n" + "\n".join(found)


@pytest.mark.parametrize("text", [
    'LINEAR = r"torch\\.nn(\\.modules\\.linear)?\\.Linear"\n',
    'HEAD = (r"transformers(\\.[\\w.]*)?\\."\n        r"\\w*ForCausalLM")\n',
    'TRACK = {"model": r"(tf_keras|keras)\\.optimizers"}\n',
    'def f(recipe, n):\n    return recipe.is_qualified(n, r"(builtins\\.)?dict")\n',
    'P = rf"^(tensorflow\\.keras|keras)\\.{PARTS}"\n',
])
def test_the_check_finds_a_pattern_however_it_is_written(text: str) -> None:
    assert len(own_patterns(ast.parse(text))) == 1


@pytest.mark.parametrize("text", [
    'BEFORE = "import torch\\nmodel = torch.nn.Linear(3, 2)\\n"\n',
    'EVIDENCE = "ValueError: transformers.Trainer needs ..."\n',
    'NAME = "torch"\n',
])
def test_example_sources_and_plain_names_are_no_patterns(text: str) -> None:
    assert own_patterns(ast.parse(text)) == []


@pytest.mark.parametrize(("pattern", "name", "matches"), [
    (patterns.TRAINING_ARGS, "transformers.TrainingArguments", True),
    (patterns.TRAINING_ARGS, "transformers.training_args_tf.TFTrainingArguments", True),
    (patterns.TRAINING_ARGS, "transformers.Seq2SeqTrainingArguments", True),
    (patterns.TRAINING_ARGS, "trl.SFTConfig", False),
    (patterns.ADAMW, "transformers.AdamW", True),
    (patterns.ADAMW, "transformers.optimization.AdamW", True),
    (patterns.ADAMW, "torch.optim.AdamW", True),
    (patterns.ADAMW, "mylib.AdamW", False),
    (patterns.MODEL, "transformers.AutoModelForCausalLM.from_config", True),
    (patterns.MODEL, "transformers.DataCollatorForLanguageModeling", False),
    (patterns.CLASSIFIER, "transformers.TFBertForTokenClassification.from_pretrained", True),
    (patterns.CROSS_ENTROPY, "torch.nn.functional.cross_entropy", True),
    (patterns.CROSS_ENTROPY, "torch.nn.functional.nll_loss", False),
    (patterns.DICT, "builtins.dict", True),
    (patterns.TF_MODEL_ANY, "transformers.TFBertModel.from_config", True),
])
def test_a_shared_pattern_matches_what_it_names(pattern: str, name: str,
                                                matches: bool) -> None:
    assert (re.fullmatch(pattern, name) is not None) is matches


def test_every_shared_pattern_is_a_regular_expression() -> None:
    names = [n for n in vars(patterns) if n.isupper()]
    assert len(names) > 60
    for name in names:
        re.compile(getattr(patterns, name))


def test_patterns_module_is_where_this_test_says() -> None:
    assert Path(patterns.__file__) == ROOT / "autofix" / "toolkit" / "patterns.py"
