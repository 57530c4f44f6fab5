"""Wording every part of autofix shares, so that one phrase reads the same everywhere.

Imports nothing of autofix.
"""

from __future__ import annotations


def plural(n: int, word: str, many: str = "") -> str:
    """``1 fix``, ``2 fixes``, ``0 runs``: ``n`` and ``word`` agreeing (``many`` for an
    irregular plural; else ``-es`` after s, x, ch and sh, ``-s`` otherwise)."""
    if n == 1:
        return f"1 {word}"
    if not many:
        many = word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")
    return f"{n} {many}"


#: What a session that ran the script to its end without an optimizer step says.
NOTHING_TRAINED = "nothing trained (the probe saw no optimizer step: no Trainer.train, " \
                  "Keras fit or optimizer.step ran)"


#: The verdict a run line gives after ``run N`` for a run without a fault, with what it
#: means; a run with a fault shows its category id there instead (``label-out-of-range``,
#: ``timeout``, ``unknown``), then what was done about it (:data:`FIX_OUTCOMES`). The
#: README's table of run verdicts is this one (``tests/test_words.py`` compares them).
RUN_VERDICTS: dict[str, str] = {
    "trains": "no fault when autofix stopped it at the step budget (`--max-steps`, or the "
              "budget extended for an unclear verdict): it was training",
    "trained": "ran to its end without a fault, training on the way (a script shorter than "
               "the budget, or `--full`)",
    "ran": "ran to its end without an error, but no optimizer step ran: nothing trained",
}
#: What follows a category on a run line: the fixes made after the run, or why none.
FIX_OUTCOMES: dict[str, str] = {
    "→ RECIPE COMMIT": "a fix committed after this run, one recipe and commit per fix",
    "→ RECIPE not kept": "a candidate fix tried and not kept (its run did not pass)",
    "→ no fix": "no recipe applied: the summary says why, with the hint",
}


def run_verdict(outcome: str, steps: int) -> str:
    """The word of :data:`RUN_VERDICTS` for a run without a fault that ended with
    ``outcome`` (:class:`autofix.types.RunOutcome`'s value: ``"budget"`` when the probe
    stopped it at the step budget, ``"ok"`` when the script exited 0) after ``steps``
    optimizer steps."""
    if outcome == "budget":
        return "trains"
    return "trained" if steps else "ran"
