"""Recipes of the integrity family: silent faults of data and evaluation, an invariant the
run broke on its real objects (a metric's inputs, the splits' label mappings, statistics
fitted before the split, probabilities given to a loss, labels masked beyond padding)."""
