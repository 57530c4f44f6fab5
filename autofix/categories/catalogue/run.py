"""Diagnoses that are not faults of the script's code but of the run itself: the script
waits for input autofix cannot give, ran past ``--timeout``, or failed in a way no
category knows."""

from __future__ import annotations

from autofix.categories.model import Category, Kind

#: ``input()`` at the end of standard input: the message CPython's ``builtin_input``
#: raises (``Python/bltinmodule.c``), the one a script asking a question at the
#: terminal gets when autofix runs it with standard input closed.
READS_STDIN = Category(
    id="reads-stdin",
    title="the script reads standard input, which autofix closes",
    types=("EOFError",),
    patterns=(r"EOF when reading a line",),
    examples=("input-in-function.txt",),
    no_recipe="no edit can give the answer the script waits for on standard input",
    hint="the script reads standard input, which autofix closes; pass values as arguments "
         "(autofix SCRIPT -- ARGS) or environment variables",
    kind=Kind.RUN,
)
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
