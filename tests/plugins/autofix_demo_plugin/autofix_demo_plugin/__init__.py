"""A demonstration plugin for autofix (see ``recipes``)."""
