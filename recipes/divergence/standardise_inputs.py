"""unscaled-inputs: numeric inputs far from unit scale make the loss diverge.

The child measured the first forward's float inputs (``facts["numeric"]["inputs"]``: the
name the tensor or array has in the user's frame that called the model, the line of that
call, its shape, its largest absolute value and per-column standard deviation). An input
with values over :data:`autofix.categories.catalogue.divergence.INPUT_SCALE` multiplies
the gradient of the first layer's weights by its scale: plain gradient descent at an
ordinary learning rate overshoots and the loss grows to ``inf`` (the ML-Dev-Bench
``nan_losses`` case: ``torch.linspace(0, 100, 50)``, SGD at 0.01, ``inf`` at step 11).

The fix standardises that input per feature column (dimension 0 holds the samples) where
it is made: ``X = (X - X.mean(dim=0)) / X.std(dim=0).clip(min=1e-8)`` (``axis=0`` for a
NumPy array; the clip keeps a constant column finite), inserted after the last assignment
the forward call sees (:mod:`autofix.toolkit.insert`), and after the simple statements of
the same block that still read the raw input before training (``y = 2 * X + 1``: targets
derived from the raw values stay as they were). Only 1-D and 2-D inputs (a table of
features) are standardised; an image batch or a loader's batch is left to the next cause.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import libcst as cst
from libcst.metadata import ParentNodeProvider, PositionProvider

from autofix.categories.catalogue.divergence import INPUT_SCALE
from autofix.toolkit import Example, NotApplicable, Recipe, insert


def _facts(name: str, line: int, kind: str = "tensor", abs_max: float = 100.0,
           shape: tuple[int, ...] = (50, 1)) -> dict[str, Any]:
    return {"numeric": {"inputs": [{"name": name, "line": line, "file": "", "kind": kind,
                                    "shape": list(shape), "abs_max": abs_max,
                                    "column_std": abs_max / 3}]}}


def _reads(node: cst.CSTNode, name: str) -> bool:
    """True when ``node`` mentions the variable ``name`` (a bare name, not an attribute)."""
    class Finder(cst.CSTVisitor):
        found = False

        def visit_Name(self, n: cst.Name) -> None:
            if n.value == name:
                self.found = True

        def visit_Attribute(self, n: cst.Attribute) -> bool:
            n.value.visit(self)
            return False

    finder = Finder()
    node.visit(finder)
    return finder.found


def _binds(stmt: cst.SimpleStatementLine, name: str) -> bool:
    for small in stmt.body:
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
            [small.target] if isinstance(small, (cst.AugAssign, cst.AnnAssign)) else []
        if any(_reads(t, name) for t in targets):
            return True
    return False


class StandardiseInputs(Recipe):
    id = "standardise-inputs"
    category = "unscaled-inputs"
    title = "standardise numeric inputs where they are made"
    restores = ("unscaled-inputs",)
    nothing_to_do = "no float input over the scale limit named at a model call"

    examples = (
        Example(
            before=(
                "import torch\n"
                "X = torch.linspace(0, 100, 50).view(-1, 1)\n"
                "y = 2 * X + 1\n"
                "def train():\n"
                "    out = model(X)\n"
            ),
            after=(
                "import torch\n"
                "X = torch.linspace(0, 100, 50).view(-1, 1)\n"
                "y = 2 * X + 1\n"
                "X = (X - X.mean(dim=0)) / X.std(dim=0).clip(min=1e-8)\n"
                "def train():\n"
                "    out = model(X)\n"
            ),
            run_facts=_facts("X", 5),
        ),
        Example(  # a NumPy array, made in the function that trains
            before=(
                "import numpy as np\n"
                "def main(rows):\n"
                "    feats = np.array(rows, dtype=np.float32)\n"
                "    for epoch in range(3):\n"
                "        pred = net(feats)\n"
            ),
            after=(
                "import numpy as np\n"
                "def main(rows):\n"
                "    feats = np.array(rows, dtype=np.float32)\n"
                "    feats = (feats - feats.mean(axis=0)) / feats.std(axis=0).clip(min=1e-8)\n"
                "    for epoch in range(3):\n"
                "        pred = net(feats)\n"
            ),
            run_facts=_facts("feats", 5, kind="array", shape=(8, 3)),
        ),
        Example(  # already standardised inputs: the scale is not the fault
            before=(
                "import torch\n"
                "X = torch.randn(50, 3)\n"
                "out = model(X)\n"
            ),
            run_facts=_facts("X", 3, abs_max=3.1),
        ),
        Example(  # an image batch: not a table of features
            before=(
                "import torch\n"
                "images = torch.rand(8, 3, 32, 32) * 255\n"
                "out = model(images)\n"
            ),
            run_facts=_facts("images", 3, abs_max=255.0, shape=(8, 3, 32, 32)),
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        for fact in self._inputs():
            use = self._use(tree, str(fact["name"]), int(fact.get("line") or 0))
            if use is None:
                continue
            return self._insert(tree, use, fact)
        raise NotApplicable(self.reason or self.nothing_to_do)

    def _inputs(self) -> list[dict[str, Any]]:
        numeric = self.rc.facts.get("numeric")
        inputs = numeric.get("inputs") if isinstance(numeric, dict) else None
        out = []
        for fact in inputs or []:
            if not isinstance(fact, dict) or not fact.get("name"):
                continue
            if not float(str(fact.get("abs_max", 0))) > INPUT_SCALE:
                continue
            file = str(fact.get("file") or "")
            if file and Path(file).resolve() != Path(self.rc.script).resolve():
                continue
            if len(fact.get("shape") or []) not in (1, 2):
                self.reason = (f"{fact['name']} has shape {fact.get('shape')}: not a table of "
                               "features (rows of numbers) to standardise per column")
                continue
            out.append(fact)
        return out

    def _use(self, tree: cst.Module, name: str, line: int) -> cst.Name | None:
        """The argument ``name`` of a call on ``line`` (the forward the child saw)."""
        class Finder(cst.CSTVisitor):
            found: cst.Name | None = None

            def visit_Arg(self, arg: cst.Arg) -> None:
                if isinstance(arg.value, cst.Name) and arg.value.value == name:
                    self.found = self.found or arg.value

        finder = Finder()
        for stmt in self._statements_at(tree, line):
            stmt.visit(finder)
        return finder.found

    def _statements_at(self, tree: cst.Module, line: int) -> list[cst.CSTNode]:
        """The simple statement lines of ``tree`` that span ``line``."""
        class Lines(cst.CSTVisitor):
            found: list[cst.SimpleStatementLine] = []

            def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
                self.found.append(node)

        lines = Lines()
        lines.found = []
        tree.visit(lines)
        spans = ((s, self.get_metadata(PositionProvider, s)) for s in lines.found)
        return [s for s, span in spans if span.start.line <= line <= span.end.line]

    def _insert(self, tree: cst.Module, use: cst.Name, fact: dict[str, Any]) -> cst.Module:
        name = str(fact["name"])
        try:
            binding = insert.last_assignment(self, use, name)
            anchor = insert.on_path_to(self, binding, use)
        except insert.NoPlace as exc:
            raise NotApplicable(str(exc)) from None
        if any(".std(" in cst.Module([]).code_for_node(s)
               for s in insert.assignment_statements(self, use, name)):
            raise NotApplicable(f"{name} is already standardised where it is made")
        anchor = self._after_raw_reads(anchor, use, name)
        axis = "axis" if fact.get("kind") == "array" else "dim"
        text = (f"{name} = ({name} - {name}.mean({axis}=0)) / "
                f"{name}.std({axis}=0).clip(min=1e-8)")
        try:
            new = insert.insert_statements(tree, anchor, [insert.parse_statement(text)])
        except insert.NoPlace as exc:
            raise NotApplicable(str(exc)) from None
        self.first_line = self.get_metadata(PositionProvider, anchor).end.line + 1
        scale = float(str(fact.get("abs_max")))
        self.edits.append(f"{name} (values up to {scale:.4g}) standardised after line "
                          f"{self.first_line - 1}: {text}")
        return new

    def _after_raw_reads(self, anchor: insert.Statement, use: cst.Name,
                         name: str) -> insert.Statement:
        """The last simple statement after ``anchor`` in its block, before the statement
        that leads to ``use`` or the first compound one, that still reads the raw ``name``
        (targets derived from it); ``anchor`` when there is none."""
        block = self.get_metadata(ParentNodeProvider, anchor)
        body = list(getattr(block, "body", ()))
        if anchor not in body:
            return anchor
        ancestors = set()
        node: cst.CSTNode | None = use
        while node is not None:
            ancestors.add(id(node))
            node = self.get_metadata(ParentNodeProvider, node, None)
        best = anchor
        for stmt in body[body.index(anchor) + 1:]:
            if id(stmt) in ancestors:
                break
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                continue
            if not isinstance(stmt, cst.SimpleStatementLine) or _binds(stmt, name):
                break
            if _reads(stmt, name):
                best = stmt
        return best

    def summary(self) -> str:
        return f"standardise the inputs where they are made ({'; '.join(self.edits)})"
