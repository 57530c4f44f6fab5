"""Recipes of the values family: faults of values, types and tensors."""
