"""Batch repair: many scripts and notebooks, each on its own branch from one HEAD.

:mod:`~autofix.batch.jobs` is one script of a batch (its row, its job, the detached
repair a sandbox or a Ray task runs); :mod:`~autofix.batch.local` runs the jobs on worker
threads; :mod:`~autofix.batch.ray_backend` as Ray tasks (an optional extra).

Imports: autofix.types, autofix.errors, autofix.words, autofix.settings, autofix.loop,
autofix.vcs, autofix.run (a sandboxed row's isolation, measured where its runs happen).
"""
