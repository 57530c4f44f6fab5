"""Recipes of the drift family: a script's classes against the installed libraries."""
