"""Errors that stop autofix before or outside the repair loop; the CLI maps them to exit 2."""

from __future__ import annotations


class AutofixError(Exception):
    """A usage or environment problem: bad path, not a git repo, bad --python, branch exists.

    ``hint`` is a one-line suggestion shown under the message.
    """

    exit_code = 2

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint
