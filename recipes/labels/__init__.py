"""Recipes of the labels family: labels against the head."""
