"""What the child reports when the script ends (event ``train_facts``), after the monitor's
final verdict and the evidence every probe gathered: the step bookkeeping of
:mod:`events`, the numeric evidence of :mod:`numeric`, the optimizer step's evidence.

Its own module because it reads both :mod:`events` and :mod:`numeric`, which imports
:mod:`events`; the bootstrap calls :func:`train_facts` once, however the script ends.
Standard library only.
"""

from __future__ import annotations

from . import modes, numeric, phases, schedules
from .contract import Event
from .events import State, confirm, emit, emit_chance


def train_facts() -> None:
    """Emit what the run did that the loss cannot show (event ``train_facts``): optimizer
    steps, scalar ``backward`` calls and ``zero_grad`` calls of a hand loop, and the
    trained model's parameter counts and dtype, and the no-grad forwards of dropout and batch
    norm layers in training and eval mode (:mod:`modes`), and the lr schedules against the
    loop that steps them (:mod:`schedules`). Called once, when the script ends.

    A training that ended by itself before the (extended) budget gets the monitor's final
    verdict here, as it would have at the budget."""
    if not State.stop and State.monitor.losses:
        final = State.monitor.final()
        if final is not None and final.kind == "learning-slowly":
            emit("finding", kind=final.kind, step=final.step, evidence=final.evidence)
        elif final is not None:
            confirm(final)
    emit_chance(force=True)
    phases.close()
    numeric.report()
    if State.evidence.records:
        emit(Event.STEP_EVIDENCE, **State.evidence.summary(State.monitor))
    predicted = [p for preds, _ in State.recent for p in preds]
    labels = [y for _, ys in State.recent for y in ys]
    emit("train_facts", optimizer_steps=State.steps, backward_calls=State.backward_calls,
         zero_grad_calls=State.zero_grad_calls, recent_predicted=predicted,
         recent_labels=labels, schedule=schedules.facts(State.steps), **modes.facts(),
         **State.model_facts)
