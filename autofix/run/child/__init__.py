"""Code that runs inside the child interpreter (the user's training environment).

Standard library only, and never ``import autofix``: ``bootstrap.py`` loads this folder
as the private package ``_autofix_child``. The parent imports ``contract`` (event names,
payload fields, environment names) and ``symptoms`` (the stall rule both sides apply).

Imports: nothing of autofix (the standard library, and this folder relatively).
"""
