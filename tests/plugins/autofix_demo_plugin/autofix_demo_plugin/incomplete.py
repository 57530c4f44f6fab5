"""A plugin whose recipe breaks the contract: no leave-alone example."""

from __future__ import annotations

from autofix.toolkit import Example, Recipe


class NoNegatives(Recipe):
    id = "demo-incomplete"
    category = "raw-dataset"
    title = "a recipe without a leave-alone example"
    examples = (Example(before="x = 1\n", after="x = 2\n"),)
