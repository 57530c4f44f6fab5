"""The scope-aware insertion helper (``autofix/insert.py``) on code with functions."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
import pytest
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider, ScopeProvider

from autofix.toolkit import insert

SOURCE = '''ds = load("module level")


def main():
    ds = load("train")
    if ds.big:
        ds = ds.map(tokenize)
    Trainer(train_dataset=ds, processing_class=tok)


def other():
    ds = 2
'''


class Resolver:
    """Metadata for one parsed module, the way a recipe has it while it runs."""

    def __init__(self, source: str) -> None:
        self.wrapper = MetadataWrapper(cst.parse_module(source))
        self.meta = self.wrapper.resolve_many(
            [ScopeProvider, ParentNodeProvider, PositionProvider])
        self.tree = self.wrapper.module

    def get_metadata(self, key: object, node: cst.CSTNode, default: object = None) -> object:
        return self.meta[key].get(node, default)  # type: ignore[index]


def trainer_call(r: Resolver) -> cst.Call:
    return cst.ensure_type(m.findall(r.tree, m.Call(func=m.Name("Trainer")))[0], cst.Call)


def test_insert_after_the_assignment_the_call_sees_in_its_function() -> None:
    r = Resolver(SOURCE)
    new, line = insert.insert_after_last_assignment(
        r, r.tree, trainer_call(r), "ds", [insert.parse_statement('ds = ds.enc("label")')])
    assert new.code == SOURCE.replace(
        "        ds = ds.map(tokenize)\n",
        '        ds = ds.map(tokenize)\n    ds = ds.enc("label")\n')
    assert line == 8  # after the whole `if`, at the function's indentation


def test_names_resolve_only_in_their_scope() -> None:
    r = Resolver(SOURCE)
    call = trainer_call(r)
    assert insert.resolves(r, call, "ds") and insert.resolves(r, call, "print")
    assert not insert.resolves(r, call, "tok")  # issue 7: NameError if a fix inserts it


def test_missing_assignment_names_the_variable() -> None:
    r = Resolver("def f():\n    Trainer(train_dataset=data)\n")
    with pytest.raises(insert.NoPlace, match="no assignment of data"):
        insert.insert_after_last_assignment(r, r.tree, trainer_call(r), "data",
                                            [insert.parse_statement("data = 1")])


def test_module_level_variable_used_in_a_function() -> None:
    source = "ds = load()\n\ndef main():\n    Trainer(train_dataset=ds)\n"
    r = Resolver(source)
    new, _ = insert.insert_after_last_assignment(r, r.tree, trainer_call(r), "ds",
                                                 [insert.parse_statement("ds = ds.x()")])
    assert new.code == "ds = load()\nds = ds.x()\n\ndef main():\n    Trainer(train_dataset=ds)\n"
