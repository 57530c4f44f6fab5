"""A small sample of ``benchmarks/bench_recipe_corpus.py`` in the suite: every recipe on a
few real files and generated programs, with no crash, unparsable or non-idempotent output."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import libcst as cst
import pytest
from libcst.codemod import CodemodContext, SkipFile

from autofix.toolkit import ParsedSource, Recipe, transform
from autofix.toolkit.discovery import all_recipes
from autofix.types import RecipeContext
from tests.conftest import ROOT, SAMPLES

_SPEC = importlib.util.spec_from_file_location(
    "bench_recipe_corpus", ROOT / "benchmarks" / "bench_recipe_corpus.py")
assert _SPEC is not None and _SPEC.loader is not None
bench = importlib.util.module_from_spec(_SPEC)
sys.modules["bench_recipe_corpus"] = bench
_SPEC.loader.exec_module(bench)


#: The recipes that follow values through scopes (the full set runs in the benchmark).
SCOPED = [r for r in all_recipes() if r.id in
          ("raw-dataset", "ragged-batch", "ragged-batch-loader", "label-out-of-range")]


def _small_corpus(count: int = 2) -> list[Path]:
    files = [f for f in bench.corpus_files() if 500 < f.stat().st_size < 4000]
    return files[:: max(1, len(files) // count)][:count]


def test_recipes_on_real_files_and_the_style_samples() -> None:
    figures = bench.Figures()
    paths = _small_corpus() + sorted((SAMPLES / "styles").glob("*.py"))[:1] + \
        sorted((SAMPLES / "cases").glob("*.py"))[:1]
    for path in paths:
        bench.check_source(path.read_text(encoding="utf-8"), str(path), figures, SCOPED)
    assert figures.inputs == len(paths)
    assert figures.applied > 0  # the samples have faults to fix
    assert figures.bad == 0, "\n".join(figures.problems)


def test_recipes_on_generated_programs() -> None:
    pytest.importorskip("hypothesmith")
    figures = bench.Figures()

    def each(source: str) -> None:
        bench.check_source(source, "generated", figures, SCOPED)
        bench.check_source(source + "\n" + bench.SNIPPET, "generated + snippet", figures, SCOPED)

    bench.generated_programs(4, each)
    assert figures.inputs == 8
    assert figures.applied > 0  # the snippet's faults are fixed inside generated code
    assert figures.bad == 0, "\n".join(figures.problems)


@pytest.mark.parametrize("prefix", [
    "import a.b, c\n",  # LibCST's scope binds "a.b": never written as a name (was a crash)
    "",  # the snippet's Trainer takes its dataset as a parameter (was not idempotent)
    "if x:\n \x0c pass\n",  # a form feed in the indent: LibCST's AddImports crashed on it
])
def test_every_recipe_on_the_snippet_found_by_the_benchmark(prefix: str) -> None:
    """The two faults bench_recipe_corpus found on generated programs, every recipe."""
    figures = bench.Figures()
    bench.check_source(prefix + bench.SNIPPET, "snippet", figures)
    assert figures.bad == 0, "\n".join(figures.problems)
    if "\x0c" in prefix:  # every recipe declines: no code can be written in that style
        assert figures.applied == 0
        assert "default_indent" in ParsedSource(prefix).unwritable
    else:
        assert figures.applied > 0


def _full(recipe: type[Recipe], source: str, rc: RecipeContext) -> str | None:
    """The recipe's output with no pre-check and its own metadata (``None``: declined)."""
    try:
        return recipe(CodemodContext(), rc).transform_module(cst.parse_module(source)).code
    except SkipFile:
        return None


def _check_precheck(cases: list[tuple[type[Recipe], str, RecipeContext]]) -> int:
    """Assert the pre-check is honest on ``cases``; returns how many it declined."""
    declined = 0
    for recipe, source, rc in cases:
        parsed = ParsedSource(source)
        full = _full(recipe, source, rc)
        if recipe.precheck(parsed):
            declined += 1
            assert full is None or full == source, f"{recipe.id} pre-check declined"
            continue
        try:
            shared: str | None = transform(recipe, parsed, rc)[1].code
        except SkipFile:
            shared = None
        assert shared == full, f"{recipe.id}: shared metadata changed the output"
    return declined


def test_precheck_never_declines_where_the_recipe_applies() -> None:
    """``Recipe.precheck`` is honest: on every recipe's examples and the first style
    sample, a recipe it declines also declines (or changes nothing) when run in full; where
    it does not decline, the shared-metadata path gives a fresh run's output."""
    style = sorted((SAMPLES / "styles").glob("*.py"))[0].read_text(encoding="utf-8")
    cases = [(r, e.before, e.context(r.category)) for r in all_recipes() for e in r.examples]
    cases += [(r, style, r.examples[0].context(r.category)) for r in all_recipes()]
    assert _check_precheck(cases) > 0


@pytest.mark.slow
def test_precheck_on_every_sample_script() -> None:
    """The same on every sample script, with the benchmark's contexts (minutes)."""
    sources = [p.read_text(encoding="utf-8") for p in sorted(SAMPLES.rglob("*.py"))]
    assert _check_precheck([(r, s, rc) for r in all_recipes() for s in sources
                            for rc in bench.contexts(r.category)]) > 0
