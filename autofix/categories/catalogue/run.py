"""Diagnoses that are not faults of the script's code but of the run itself."""

from __future__ import annotations

from autofix.categories.model import Category, Kind

TIMEOUT = Category(
    id="timeout",
    no_recipe="the script ran past --timeout",
    title="the script ran past --timeout and was killed",
    hint="raise --timeout, or check for a hang (a blocking read, a dead lock, a huge dataset)",
    kind=Kind.RUN,
)
UNKNOWN = Category(
    id="unknown",
    no_recipe="autofix has no category for this failure",
    title="a failure autofix has no category for",
    hint="the key traceback lines are shown; no recipe was tried",
    kind=Kind.RUN,
)

