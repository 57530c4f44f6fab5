"""The categories the call contracts declare themselves (``autofix/run/child/call_contracts/``:
a contract whose fault the catalogue had no category for carries its category's title and
hint): one declaration, in the child's contract table, for the check on the real
arguments, the trial, the repair operators, the examples and the category.

Each is shown only by its breach (``needs_facts``: :func:`autofix.categories.breaches.breach_of`
finds the contract broken at the failure); its advice is the breach in the script's terms.
"""

from __future__ import annotations

from collections.abc import Callable

from autofix.categories.breaches import breach_of
from autofix.categories.failure import Failure
from autofix.categories.model import Category
from autofix.run.child.call_contracts import CONTRACTS as CALL_CONTRACTS


def _shown_by(category: str) -> Callable[[Failure], bool | None]:
    """The check of a declared category: its contract's breach at the failure."""

    def check(failure: Failure) -> bool | None:
        found = breach_of(failure.exc)
        return None if found is None else found.category == category
    return check


def _declared() -> tuple[Category, ...]:
    found: dict[str, Category] = {}
    for contract in CALL_CONTRACTS:
        if contract.title and contract.category not in found:
            found[contract.category] = Category(
                id=contract.category, title=contract.title, hint=contract.hint,
                check=_shown_by(contract.category), needs_facts=True,
                no_recipe="no repair operator reached where the script makes the value")
    return tuple(found.values())


#: The categories declared by a call contract (in the contracts' order), each once.
DECLARED: tuple[Category, ...] = _declared()
