"""The command line: a thin layer over :func:`autofix.loop.engine.repair` and the batch
and git helpers. ``app`` (:mod:`autofix.cli.app`) holds the commands: ``fix``
(:mod:`~autofix.cli.fix`), ``batch`` (:mod:`~autofix.cli.batch`), ``recipes``
(:mod:`~autofix.cli.listing`), ``log``/``undo``/``branches`` (:mod:`~autofix.cli.branches`),
each run inside the one error boundary (:mod:`~autofix.cli.boundary`); the options ``fix``
and ``batch`` share are defined once (:mod:`~autofix.cli.options`).

Imports: anything of autofix; nothing imports the CLI.
"""

from __future__ import annotations

from autofix.cli.app import app, main

__all__ = ["app", "main"]
