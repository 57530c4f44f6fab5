"""The probe: runs inside the child interpreter, around the user's script.

This file is executed by path (``python bootstrap.py ...``) with the user's training
interpreter, where autofix itself is not installed, so it uses the standard library
only and imports ML libraries lazily, never itself.

Usage: ``python bootstrap.py PATCHED_SOURCE ORIGINAL_PATH [SCRIPT_ARGS...]``

Environment:
    AUTOFIX_PROBE_FILE  JSON-lines file the probe appends its events to (required).
    AUTOFIX_MAX_STEPS   stop training cleanly after this many optimizer steps
                        (``0`` or unset: no limit).

Events (one JSON object per line, ``"event"`` key): their names and payload fields are
defined once in ``contract.py`` (``Event``, ``EVENTS``), which
``autofix/run/probe_events.py`` reads.
The probes themselves are in ``probes.py``, the symptom rules in ``symptoms.py``.
"""

from __future__ import annotations

import builtins
import importlib.metadata
import importlib.util
import linecache
import os
import sys
import traceback
import types
from collections.abc import Callable

_DISTRIBUTIONS = ("torch", "transformers", "datasets", "accelerate", "tensorflow", "tf-keras",
                  "keras", "numpy", "trl", "peft")


def load_child_package() -> types.ModuleType:
    """Import this folder as the private package ``_autofix_child`` (not ``autofix``,
    which the training environment does not have)."""
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(
        "_autofix_child", os.path.join(here, "__init__.py"), submodule_search_locations=[here])
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules["_autofix_child"] = package
    spec.loader.exec_module(package)
    return package


load_child_package()
from _autofix_child import events, modules, preflight, sampling  # noqa: E402
from _autofix_child.closing import train_facts  # noqa: E402
from _autofix_child.contract import Env  # noqa: E402
from _autofix_child.events import (  # noqa: E402
    AutofixStop,
    Event,
    describe_exception,
    emit,
    trimmed_traceback,
)
from _autofix_child.preflight import PreflightFailure  # noqa: E402
from _autofix_child.probes import install  # noqa: E402


def configure(environ: dict[str, str] | os._Environ[str]) -> None:
    """The run's switches, from the environment the parent set (:class:`contract.Env`)."""
    events.configure(environ)
    modules.install(environ.get(Env.PATCHED_MODULES, ""))
    preflight.ENABLED = environ.get(Env.PREFLIGHT, "0") == "1"
    sampling.SAMPLE_ROWS = int(environ.get(Env.SAMPLE_ROWS, "0") or 0)


def versions() -> dict[str, str]:
    found = {}
    for dist in _DISTRIBUTIONS:
        try:
            found[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


# --- running the script ------------------------------------------------------------


def run(patched: str, original: str, argv: list[str],
        probes: Callable[[], None] = install) -> int:
    """Run the patched source as the script ``original`` with ``argv``; ``probes``
    installs the probes once the run's switches are read (the warm interpreter's fork,
    ``zygote.py``, has installed most of them before its imports). Returns the exit code."""
    with open(patched, encoding="utf-8") as fh:
        source = fh.read()
    # Tracebacks name the user's path but must show the patched file's lines.
    lines = source.splitlines(keepends=True)
    linecache.cache[original] = (len(source), None, lines, original)

    sys.argv = [original, *argv]
    sys.path[0] = os.path.dirname(os.path.abspath(original))
    configure(os.environ)
    probes()
    emit(Event.VERSIONS, versions=versions())

    main = types.ModuleType("__main__")
    main.__file__ = original
    main.__builtins__ = builtins  # type: ignore[attr-defined]
    sys.modules["__main__"] = main
    try:
        code = compile(source, original, "exec", dont_inherit=True)
        exec(code, main.__dict__)
    except AutofixStop as stop:  # budget reached or symptom confirmed in a hand-written loop
        train_facts()
        emit(Event.EXIT, code=0, stopped=str(stop))
        return 0
    except PreflightFailure as failure:  # a failure recorded before fit, now reported
        emit("exception", **failure.description)
        emit("exit", code=1)
        sys.stderr.write(failure.text)
        return 1
    except SystemExit as exc:
        train_facts()
        code_ = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if code_ != 0:
            emit(Event.EXCEPTION, **describe_exception(exc, skip=__file__))
        emit(Event.EXIT, code=code_)
        raise
    except BaseException as exc:
        train_facts()
        emit(Event.EXCEPTION, **describe_exception(exc, skip=__file__))
        emit(Event.EXIT, code=1)
        traceback.print_exception(type(exc), exc, trimmed_traceback(exc, __file__))
        return 1
    train_facts()
    emit(Event.EXIT, code=0)
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.stderr.write("usage: bootstrap.py PATCHED_SOURCE ORIGINAL_PATH [ARGS...]\n")
        sys.exit(2)
    sys.exit(run(sys.argv[1], sys.argv[2], sys.argv[3:]))
