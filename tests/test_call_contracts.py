"""The call contracts (``autofix/run/child/call_contracts/``): every contract's examples run
on the real torch, the breach found at the failure of each script that breaks it and none
at a script that keeps it; the declarations are whole (ids, categories, operators), and a
breach travels as the child sends it to the category and the advice the parent gives."""

from __future__ import annotations

import re
import traceback
from pathlib import Path
from typing import Any

import pytest
import torch

from autofix.categories import all_categories, is_category
from autofix.categories.breaches import breach_of
from autofix.loop.diagnosis import classify
from autofix.run.child.call_contracts import CONTRACTS, Contract, Example, breach_at
from autofix.run.child.events import describe_exception
from autofix.run.probe_events import exception_from_json
from autofix.toolkit.discovery import all_recipes

CASES = [(c, e) for c in CONTRACTS for e in c.examples]


def _run(example: Example, folder: Path) -> BaseException | None:
    """Run an example script as the user's file ``example_script.py`` in ``folder``; the
    exception it raised (``None`` when it ran through)."""
    path = folder / "example_script.py"
    path.write_text(example.script)
    torch.manual_seed(0)
    try:
        exec(compile(example.script, str(path), "exec"), {"__name__": "__main__"})
    except Exception as exc:  # noqa: BLE001 - the example's failure is what is checked
        return exc
    return None


@pytest.mark.parametrize(("contract", "example"), CASES,
                         ids=[f"{c.id}-{i}" for i, (c, _) in enumerate(CASES)])
def test_each_example_breaks_or_keeps_its_contract(contract: Contract, example: Example,
                                                   tmp_path: Path) -> None:
    raised = _run(example, tmp_path)
    if not example.breaks:
        found = breach_at(raised.__traceback__) if raised is not None else {}
        assert found.get("contract") != contract.id, found
        return
    assert raised is not None, "the example must fail"
    found = breach_at(raised.__traceback__)
    assert found["contract"] == contract.id, (found, "".join(traceback.format_exception(raised)))
    assert found["category"] == contract.category
    assert found["observed"] and found["expected"] and found["property"]
    if contract.trial is not None:  # the trial confirms it on the real arguments
        assert found["trial"]["operator"] in contract.repairs, found["trial"]


def test_every_example_is_run() -> None:
    assert len(CASES) == sum(len(c.examples) for c in CONTRACTS) >= 2 * len(CONTRACTS)


@pytest.mark.parametrize("contract", CONTRACTS, ids=[c.id for c in CONTRACTS])
def test_each_contract_is_declared_whole(contract: Contract) -> None:
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", contract.id)
    assert any(e.breaks for e in contract.examples), "an example that breaks it"
    assert any(not e.breaks for e in contract.examples), "an example that keeps it"
    assert contract.sites and contract.argument and contract.says and contract.api
    if contract.category:
        assert is_category(contract.category), contract.category
    operators = {op for recipe in all_recipes() for op in getattr(recipe, "operators", ())}
    operators |= {r.id for r in all_recipes()}  # an existing recipe named as the operator
    for repair in contract.repairs:
        assert repair in operators, f"no recipe carries out {repair!r}"


def test_ids_are_unique_and_declared_categories_registered_once() -> None:
    ids = [c.id for c in CONTRACTS]
    assert len(ids) == len(set(ids))
    registered = [c.id for c in all_categories()]
    for contract in CONTRACTS:
        if contract.title:
            assert registered.count(contract.category) == 1


def _sent(script: str, folder: Path) -> dict[str, Any]:
    """What the child sends for the failure of ``script`` (the exception event), run as
    the user's file ``train_script.py`` in ``folder``."""
    path = folder / "train_script.py"
    path.write_text(script)
    try:
        exec(compile(script, str(path), "exec"), {"__name__": "__main__"})
    except Exception as exc:  # noqa: BLE001
        return describe_exception(exc)
    raise AssertionError("the script must fail")


def test_a_breach_travels_to_its_category_and_advice(tmp_path: Path) -> None:
    script = ("import torch\n"
              "torch.manual_seed(0)\n"
              "head = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8))\n"
              "rows = torch.randn(1, 4)\n"
              "out = head(rows)\n")
    exc = exception_from_json(_sent(script, tmp_path))
    found = breach_of(exc)
    assert found is not None and found.contract == "batch-norm-rows"
    assert found.facts["rows"] == 1 and found.operator == "drop-last-batch"
    assert classify(exc).id == "batch-norm-single-row"
    assert "more than one value per channel" in found.sentence()


def test_the_holders_name_the_users_value(tmp_path: Path) -> None:
    script = ("import torch\n"
              "import torch.nn.functional as F\n"
              "scores = torch.randn(6, 3)\n"
              "batch = {'labels': torch.randint(0, 3, (6, 1))}\n"
              "loss = F.cross_entropy(scores, batch['labels'])\n")
    found = breach_of(exception_from_json(_sent(script, tmp_path)))
    assert found is not None and found.contract == "class-target-shape"
    assert found.operator == "drop-trailing-axis" and found.change == "target.squeeze(-1)"
    assert ("batch", "labels") in {(h.name, h.key) for h in found.holders}
    assert "batch['labels']" in found.advice()
