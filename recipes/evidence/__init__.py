"""Recipes of the evidence family: a stall named by the evidence of the optimizer step."""
