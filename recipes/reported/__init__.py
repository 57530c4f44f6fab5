"""Recipes of the reported family: faults from the corpus of public reports."""
