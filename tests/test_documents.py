"""Notebooks as one program: magics skipped, lines mapped to cells, only patched cells
written back (nbformat, no hand-written JSON)."""

from __future__ import annotations

import json

import nbformat

from autofix.run.programs import NotebookDocument, document_for


def notebook() -> str:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Fine-tuning"),
        nbformat.v4.new_code_cell("!pip install transformers datasets\n%matplotlib inline\n"
                                  "import os\nx = 1\n"),
        nbformat.v4.new_code_cell("def f():\n    return x", execution_count=3, outputs=[
            nbformat.v4.new_output("stream", name="stdout", text="old output\n")]),
        nbformat.v4.new_code_cell("%%bash\necho hi"),
        nbformat.v4.new_code_cell("print(f())", execution_count=5, outputs=[
            nbformat.v4.new_output("stream", name="stdout", text="1\n")]),
    ]
    return nbformat.writes(nb) + "\n"


def test_program_skips_magics_and_maps_lines_to_cells() -> None:
    doc = NotebookDocument()
    program = doc.program(notebook())
    lines = program.source.splitlines()
    assert "!pip" not in "".join(ln for ln in lines if not ln.startswith("#"))
    compile(program.source, "nb.ipynb", "exec")  # it is plain Python
    assert program.skipped == ["cell 1: !pip install transformers datasets",
                               "cell 1: %matplotlib inline", "cell 3: %%bash", "cell 3: echo hi"]
    line = lines.index("    return x") + 1
    assert doc.where(program, line) == "cell 2, line 2"


def test_unchanged_program_gives_the_same_file() -> None:
    doc = NotebookDocument()
    text = notebook()
    assert doc.content(text, doc.program(text).source) == text


def test_only_the_patched_cell_changes() -> None:
    doc = NotebookDocument()
    text = notebook()
    program = doc.program(text).source.replace("    return x", "    return x + 1")
    new = json.loads(doc.content(text, program))
    old = json.loads(text)
    assert new["metadata"] == old["metadata"] and new["nbformat"] == old["nbformat"]
    changed = [i for i, (a, b) in enumerate(zip(old["cells"], new["cells"])) if a != b]
    assert changed == [2]
    cell = new["cells"][2]
    assert "".join(cell["source"]) == "def f():\n    return x + 1"
    assert cell["outputs"] == [] and cell["execution_count"] is None
    assert {k: v for k, v in cell.items() if k not in ("source", "outputs", "execution_count")} \
        == {k: v for k, v in old["cells"][2].items()
            if k not in ("source", "outputs", "execution_count")}


def test_magic_lines_survive_a_patch_of_their_cell() -> None:
    doc = NotebookDocument()
    text = notebook()
    program = doc.program(text).source.replace("x = 1", "x = 2")
    cell = json.loads(doc.content(text, program))["cells"][1]
    assert "".join(cell["source"]) == ("!pip install transformers datasets\n"
                                       "%matplotlib inline\nimport os\nx = 2\n")


def test_document_kind_by_suffix(tmp_path: object) -> None:
    from pathlib import Path

    assert document_for(Path("a.ipynb")).kind == "notebook"
    assert document_for(Path("a.py")).kind == "script"


def _adamw_notebook() -> str:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import torch\nmodel = torch.nn.Linear(2, 2)"),
        nbformat.v4.new_code_cell("from transformers import AdamW\n\n"
                                  "optimizer = AdamW(model.parameters(), lr=5e-5)"),
        nbformat.v4.new_code_cell("print(optimizer)"),
    ]
    return nbformat.writes(nb) + "\n"


def test_a_recipe_removing_a_cells_first_statement_keeps_the_cell() -> None:
    """The cell's marker sits in the leading lines of its first statement (LibCST); a
    recipe that removes that statement must not merge the cell into the one before."""
    import libcst as cst

    from autofix.toolkit import Example, Recipe
    from autofix.toolkit.apply import apply_recipe
    from autofix.types import Applied, Diagnosis, RecipeContext

    class DropImport(Recipe):
        id = "drop-import"
        category = "api-drift"
        title = "drop an import"
        examples = (Example("from transformers import AdamW\nx = 1\n", "x = 1\n"),
                    Example("x = 1\n"))

        def leave_ImportFrom(self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom
                             ) -> cst.ImportFrom | cst.RemovalSentinel:
            self.changed(original_node, "dropped")
            return cst.RemoveFromParent()

    doc = NotebookDocument()
    text = _adamw_notebook()
    rc = RecipeContext(diagnosis=Diagnosis(category="api-drift", evidence="e"))
    outcome = apply_recipe(DropImport, doc.program(text).source, rc)
    assert isinstance(outcome, Applied)
    assert "# %% autofix cell 1" in outcome.source
    cells = [c.source for c in nbformat.reads(doc.content(text, outcome.source), 4).cells]
    assert cells[1] == "optimizer = AdamW(model.parameters(), lr=5e-5)"
    assert cells[0] == "import torch\nmodel = torch.nn.Linear(2, 2)"
    assert cells[2] == "print(optimizer)"


def test_a_program_that_lost_a_cell_marker_is_refused() -> None:
    import pytest

    from autofix.run.programs import CellsLost

    doc = NotebookDocument()
    text = _adamw_notebook()
    merged = doc.program(text).source.replace("# %% autofix cell 1\n", "")
    with pytest.raises(CellsLost, match="cell 1"):
        doc.content(text, merged)
