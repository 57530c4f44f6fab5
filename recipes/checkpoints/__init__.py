"""Recipes of the checkpoints family: saving and reloading what was trained."""
