"""Recipes of the data family: faults of data structures at the failing boundary."""
