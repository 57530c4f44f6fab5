"""Recipes of the course family: the course's faults (chapter 8) and their kin."""
