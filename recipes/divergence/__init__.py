"""Recipes of the divergence family: a loss that diverges."""
