"""Recipes of the symptoms family: training symptoms and their root causes."""
