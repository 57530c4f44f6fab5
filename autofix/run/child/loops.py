"""The step budget of a hand-written loop ends its training loop, not the program.

``Trainer`` and Keras ``fit`` stop at the budget by returning (``should_training_stop``,
``stop_training``), so the script goes on to what follows training: its evaluation, saving
the model, reloading it, predicting. A hand-written PyTorch loop has no such switch; the
probe used to end the whole program from ``optimizer.step()``, so every fault after the
training loop stayed hidden (the course's evaluation loop after training, a checkpoint
reloaded with ``torch.load`` at the next epoch, ``from_pretrained`` on a saved file).

Here, at the budget, the training data end: the ``DataLoader`` iterator that gave the last
training batch stops (its next ``__next__`` raises ``StopIteration``), so the ``for batch
in loader`` loop finishes the batch in hand and exits as if the data were used up, and
the script runs on. Later passes over the same dataset (the remaining epochs of
``for epoch in range(num_epochs)``, a second training loop over the same loader) are empty
too, at most :data:`MAX_EMPTY_PASSES` of them; one more ends the program as before
(:class:`~events.AutofixStop`), so a ``while`` loop that keeps asking for batches cannot
spin. An optimizer step on other data after the budget, a confirmed symptom, or a budget
reached in a loop whose batches do not come from a ``DataLoader`` end the program at once.
Code that runs once per epoch (an evaluation) runs for each empty epoch: with 3 epochs
(the course's ``num_epochs``) the script reaches what follows its loop.

Standard library only; torch is patched when it is imported (``probes.HOOKS``).
"""

from __future__ import annotations

import types
from typing import Any

from .contract import Event
from .events import AutofixStop, State, emit

#: Empty passes over the training data after the budget (the epochs left) before the
#: program is ended: the course's loops and most tutorials train for 3 epochs.
MAX_EMPTY_PASSES = 3


class _Loops:
    last_iterator: Any = None  # the DataLoader iterator that gave the latest batch
    ended: set[int] = set()  # ids of the datasets whose training the budget ended
    empty_passes = 0


def _data(iterator: Any) -> int:
    """The identity of the data an iterator reads (its loader's dataset, or itself)."""
    return id(getattr(iterator, "_dataset", iterator))


def end_training_loop() -> bool:
    """At the budget of a hand-written loop: end the training data whose batch was just
    trained on (True), or say the program must stop (False: a symptom, or no
    ``DataLoader`` iterator gave the batch)."""
    iterator = _Loops.last_iterator
    if State.stop != "budget" or iterator is None:
        return False
    _Loops.ended.add(_data(iterator))
    iterator._autofix_seen = True  # this pass ends now; it is not an empty one
    emit(Event.LOOP_ENDED, step=State.steps)
    return True


def training_iterator() -> Any:
    """The ``DataLoader`` iterator that gave the latest batch (``None`` before any): at a
    hand loop's optimizer step, the training data's (``_autofix_drawn``: its batches so
    far in this pass)."""
    return _Loops.last_iterator


def patch_iterators(module: types.ModuleType) -> None:
    """``_BaseDataLoaderIter.__next__`` raises ``StopIteration`` on the training data the
    budget ended (``AutofixStop`` after :data:`MAX_EMPTY_PASSES` empty passes), and
    records which iterator gave the latest batch."""
    base = getattr(module, "_BaseDataLoaderIter", None)
    if base is None or getattr(base.__next__, "_autofix", False):
        return
    original_next, original_reset = base.__next__, base._reset

    def __next__(self: Any) -> Any:
        if _Loops.ended and _data(self) in _Loops.ended:
            if not getattr(self, "_autofix_seen", False):
                self._autofix_seen = True
                _Loops.empty_passes += 1
                if _Loops.empty_passes > MAX_EMPTY_PASSES:
                    raise AutofixStop(State.stop or "budget")
            raise StopIteration
        batch = original_next(self)
        _Loops.last_iterator = self
        self._autofix_drawn = getattr(self, "_autofix_drawn", 0) + 1  # this pass's batches
        return batch

    def _reset(self: Any, *args: Any, **kwargs: Any) -> Any:
        self._autofix_seen = False  # a persistent-workers iterator starts a new pass
        self._autofix_drawn = 0
        return original_reset(self, *args, **kwargs)

    __next__._autofix = True  # type: ignore[attr-defined]
    base.__next__ = __next__
    base._reset = _reset
