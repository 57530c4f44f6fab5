"""One batch of a loader, taken the way the loader takes it, and the random states kept
while a check draws one: shared by the preflight checks (:mod:`preflight`) and the
language-model checks (:mod:`preflight_lm`).

Runs inside the child: standard library only at import (``torch`` and ``numpy`` are the
child's own, imported when a batch is taken).
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def same_randomness() -> Iterator[None]:
    """Restore the ``random``, ``numpy`` and ``torch`` (CPU) random states on exit, so a
    collator that draws random numbers leaves the run's randomness unchanged."""
    import torch

    python_state = random.getstate()
    try:
        import numpy
        numpy_state: Any = numpy.random.get_state()
    except ImportError:  # pragma: no cover - numpy comes with torch here
        numpy, numpy_state = None, None  # type: ignore[assignment]
    with torch.random.fork_rng(devices=[]):
        try:
            yield
        finally:
            random.setstate(python_state)
            if numpy is not None:
                numpy.random.set_state(numpy_state)


def loader_batch(loader: Any) -> Any:
    """The first rows of ``loader``'s dataset (a ``torch.utils.data.DataLoader``) through
    its ``collate_fn``, fetched as torch's map-style fetcher does (``__getitems__`` when
    the dataset has it); ``None`` when the loader does not batch (``batch_size=None``)."""
    dataset, size = loader.dataset, loader.batch_size
    if not isinstance(size, int) or size < 1:
        return None
    index = list(range(min(len(dataset), size)))
    fetch = getattr(dataset, "__getitems__", None)
    rows = fetch(index) if fetch else [dataset[i] for i in index]
    return loader.collate_fn(rows)
