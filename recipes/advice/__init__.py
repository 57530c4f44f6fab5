"""Recipes of the advice family: the libraries' own advice (a message that names the change)."""
