"""Recipes of the contracts family: the contracts of torch's modules and tensors."""
