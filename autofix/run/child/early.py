"""The probe's early evaluation, kept from changing the failure (issue 23, item 6).

A budgeted run stops after a few optimizer steps, usually before the script's first
evaluation, so faults of the evaluation path (``compute_metrics`` given logits) would stay
hidden. So before a ``Trainer`` trains, the probe runs ``evaluate`` once on a few
evaluation rows. That runs the user's code early: ``compute_metrics`` on 32 rows of an
untrained model before ``state.epoch`` exists, and the user's callbacks
(``on_evaluate``, ``on_log``). Code that is right at the script's own evaluation can
fail there for reasons of the probe's own (an ``on_evaluate`` that formats
``state.epoch``, which is ``None`` before training; ``roc_auc_score`` on a slice holding
one class), and a stateful callback (early stopping counts evaluations) would be changed
by it. Two rules keep the run the script's:

- the early evaluation fires no callback (the user's, the progress bar's: none is what
  the check is for) and leaves no trace in the Trainer's state (the metrics it logs are
  taken out of ``state.log_history`` again);
- a failing early evaluation is never the run's failure by itself. Only the preflight's
  metric check can make it one, in a Trainer that evaluates during training (so the script
  itself would reach the fault): ``preflight.confirm_metric_fault``, ``compute_metrics``
  raises on the logits of a few rows and runs on their argmax, a fault of the script on any
  rows and any state; then the run ends before its first step with that error. Otherwise
  the run goes on as the script would; when the Trainer evaluates during training (an
  ``eval_strategy`` other than ``"no"``), the probe asks for the Trainer's own evaluation
  at the step where the step budget stops training (``control.should_evaluate``, as
  ``DefaultFlowCallback`` does at an evaluation step): the script's whole evaluation set,
  its callbacks, its state after the steps it trained. What that raises is the library's
  own error, raised where the script raises it; when it passes, the early failure was the
  probe's own and nothing is reported. A Trainer that evaluates only when the script calls
  ``evaluate`` after ``train`` needs nothing more: the script calls it itself once the
  budget ends training.

Standard library only at import (the Trainer is the child's own).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from .contract import Event
from .events import emit

#: Rows of the evaluation set sent through ``evaluate`` before a budgeted run trains.
EARLY_EVAL_ROWS = 32


class Owed:
    """``evaluation``: an early evaluation failed, so the Trainer's own evaluation is run
    at the budget's last step (once)."""

    evaluation = False


def evaluates_during_training(trainer: Any) -> bool:
    """The Trainer evaluates on its own schedule (``eval_strategy`` "steps" or "epoch")
    and has an evaluation set."""
    strategy = getattr(getattr(trainer, "args", None), "eval_strategy", "no")
    return str(getattr(strategy, "value", strategy)) != "no" and \
        getattr(trainer, "eval_dataset", None) is not None


@contextlib.contextmanager
def quiet(trainer: Any) -> Iterator[None]:
    """No callback fires inside (the handler's list is emptied, then put back), and the
    entries appended to ``trainer.state.log_history`` inside are removed on exit."""
    handler: Any = getattr(trainer, "callback_handler", None)
    callbacks = getattr(handler, "callbacks", None)
    history = getattr(getattr(trainer, "state", None), "log_history", None)
    logged = len(history) if isinstance(history, list) else 0
    if isinstance(callbacks, list):
        handler.callbacks = []
    try:
        yield
    finally:
        if isinstance(callbacks, list):
            handler.callbacks = callbacks
        if isinstance(history, list):
            del history[logged:]


def evaluate_early(trainer: Any) -> bool:
    """``evaluate`` on up to :data:`EARLY_EVAL_ROWS` eval rows before training, quietly
    (:func:`quiet`). Skipped when the Trainer has no eval set or no ``compute_metrics``.
    A failure is not raised: it is reported (``early_eval`` event, ``deferred``) and, when
    the Trainer evaluates during training, its own evaluation is owed at the budget's end
    (:class:`Owed`; module docstring). Returns False when the evaluation failed (the
    preflight's metric check then decides whether it is the script's fault:
    ``preflight.confirm_metric_fault``), True when it passed or was skipped."""
    dataset = trainer.eval_dataset
    if isinstance(dataset, dict):
        dataset = next(iter(dataset.values()), None)
    if dataset is None or trainer.compute_metrics is None or not hasattr(dataset, "select"):
        return True
    rows = min(len(dataset), EARLY_EVAL_ROWS)
    try:
        with quiet(trainer):
            trainer.evaluate(eval_dataset=dataset.select(range(rows)))
    except Exception as exc:  # noqa: BLE001 - the probe's own run: never the run's failure
        Owed.evaluation = evaluates_during_training(trainer)
        emit(Event.EARLY_EVAL, rows=rows, deferred=f"{type(exc).__name__}: {exc}"[:300],
             owed=Owed.evaluation)
        return False
    emit(Event.EARLY_EVAL, rows=rows)
    return True


def at_budget_end(control: Any) -> None:
    """At the step where the step budget stops training: ask for the Trainer's own
    evaluation when an early evaluation failed (once)."""
    if Owed.evaluation:
        Owed.evaluation = False
        control.should_evaluate = True
