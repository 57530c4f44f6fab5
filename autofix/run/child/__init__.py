"""Code that runs inside the child interpreter (the user's training environment).

Standard library only, and never ``import autofix``: ``bootstrap.py`` loads this folder
as the private package ``_autofix_child``. ``symptoms`` is also imported by autofix itself.
"""
