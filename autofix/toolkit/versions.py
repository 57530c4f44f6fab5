"""Version comparisons for the target environment (the interpreter that runs the script)."""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

#: transformers renamed ``Trainer(tokenizer=)`` to ``processing_class=`` in 4.46.
PROCESSING_CLASS_SINCE = "4.46.0"


def at_least(version: str, minimum: str) -> bool:
    """True when ``version`` >= ``minimum`` (PEP 440; ``"4.46.0.dev0"`` counts as 4.46).

    An unparsable ``version`` is treated as new (the current release line).
    """
    try:
        return Version(version).release >= Version(minimum).release
    except InvalidVersion:
        return True
