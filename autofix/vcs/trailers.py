"""The trailers that make a commit autofix's, written and read in one place.

A fix commit ends with ``Autofix-Category: <id>`` and ``Autofix-Recipe: <id>``, then
``Autofix-Via: <category>`` when another category led there (a symptom, a rerun, a trial)
and ``Autofix-Rank: <rank> of <n>`` for a distributed launch; history tools (``autofix
log``, ``undo``, ``branches``) work from these alone (aider's commit ownership, kept in
git instead of memory).
"""

from __future__ import annotations

from dataclasses import dataclass

CATEGORY = "Autofix-Category"
RECIPE = "Autofix-Recipe"
VIA = "Autofix-Via"
RANK = "Autofix-Rank"


@dataclass(frozen=True)
class Trailers:
    """The autofix trailers of one commit message ("" where absent)."""

    category: str = ""
    recipe: str = ""
    via: str = ""
    rank: str = ""

    def lines(self) -> list[str]:
        """The trailer lines to end a message with (empty fields left out)."""
        pairs = ((CATEGORY, self.category), (RECIPE, self.recipe), (VIA, self.via),
                 (RANK, self.rank))
        return [f"{key}: {value}" for key, value in pairs if value]


def parse_trailers(message: str) -> Trailers:
    """The autofix trailers of ``message`` (a commit message); unknown keys are ignored."""
    found = {key.strip(): value.strip() for key, _, value in
             (line.partition(":") for line in message.splitlines())
             if key.strip() in (CATEGORY, RECIPE, VIA, RANK)}
    return Trailers(found.get(CATEGORY, ""), found.get(RECIPE, ""), found.get(VIA, ""),
                    found.get(RANK, ""))
