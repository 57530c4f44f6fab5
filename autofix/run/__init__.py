"""Running a script: the child process and what comes back from it.

:mod:`~autofix.run.runner` starts the child (the user's interpreter, ``--python``) with
the probe's bootstrap, enforces the timeout and cancel, and returns a
:class:`~autofix.types.RunResult`; :mod:`~autofix.run.probe_events` reads the probe's
events; :mod:`~autofix.run.sandbox` confines untrusted scripts;
:mod:`~autofix.run.programs` turns a notebook into the program that runs (and back).
``child/`` runs inside the training interpreter, where autofix is not installed: it is
standard library only, and the parent imports only its contract (``child/contract.py``)
and the shared stall rule (``child/symptoms.py``).

Imports: autofix.types, autofix.errors, autofix.settings, autofix.run.child.contract,
autofix.run.child.symptoms.
"""
