"""Git: the only package that imports GitPython.

:mod:`~autofix.vcs.repo` opens the repository and writes the fix branch with private
index files and direct ref updates (never the user's work tree, index or current
branch), and reads autofix's branches back (log, undo, prune);
:mod:`~autofix.vcs.writers` is the :class:`~autofix.vcs.writers.BranchWriter` protocol
the loop writes through, with an in-memory writer whose commits are replayed later;
:mod:`~autofix.vcs.trailers` writes and parses the commit trailers.

Imports: autofix.types, autofix.errors, autofix.words.
"""
