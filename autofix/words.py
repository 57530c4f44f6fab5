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
