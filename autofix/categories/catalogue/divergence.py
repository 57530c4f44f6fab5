"""A loss that diverges: the root causes behind ``nan-loss`` that have recipes, read from
the run's numeric evidence (``ProbeReport.facts["numeric"]``, measured by the child's
``numeric.py``: the first forward's float inputs and each hand-loop step's gradient norm)
and its loss and learning-rate history.

The causes are alternatives, tried in this order, each only where its evidence shows it:
inputs far from unit scale are standardised where they are made (``unscaled-inputs``); a
gradient norm that explodes in a hand loop gets clipping (``exploding-gradients``);
otherwise, when the loss grew or the gradient exploded, the learning rate is divided
(``diverging-lr``). A non-finite loss that came from a level one names no cause. The
first whose recipe applies is the fix; it is kept only when the next run's loss is finite
and falling (``Proof.falling``), else the next cause is tried (``Category.alternatives``
on ``nan-loss``).
"""

from __future__ import annotations

import math
from typing import Any

from autofix.categories.model import Category, Kind, Proof, RootCause
from autofix.types import Diagnosis, ProbeReport, RunResult

#: A float input whose largest absolute value is over this is not standardised: a
#: standardised feature lies within a few units of 0 (|z| > 10 has a probability under
#: 1e-23 for a normal feature), and one of this scale multiplies the gradient of a linear
#: layer's weights by it (the ML-Dev-Bench ``nan_losses`` case: values up to 100, SGD at
#: lr 0.01, the loss is inf at step 11).
INPUT_SCALE = 10.0
#: A gradient norm this many times the first step's (or a non-finite one) has exploded.
EXPLODING = 100.0
#: A loss this many times its lowest earlier value before the non-finite step has grown.
GROWTH = 10.0


def numeric(probe: ProbeReport) -> dict[str, Any]:
    """What the child's ``numeric`` event measured (empty when it did not run)."""
    found = probe.facts.get("numeric")
    return found if isinstance(found, dict) else {}


def _float(value: object) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return math.nan


def unscaled_inputs(probe: ProbeReport) -> list[dict[str, Any]]:
    """The first forward's float inputs with a name in the user's code whose largest
    absolute value is over :data:`INPUT_SCALE`."""
    inputs = numeric(probe).get("inputs") or []
    return [i for i in inputs if isinstance(i, dict) and i.get("name")
            and _float(i.get("abs_max")) > INPUT_SCALE]


def grad_norms(probe: ProbeReport) -> list[float]:
    """Each hand-loop optimizer step's gradient norm (``inf``/``nan`` kept)."""
    return [_float(n) for n in numeric(probe).get("grad_norms") or []]


def exploding(probe: ProbeReport) -> bool:
    """A hand loop whose gradient norm went non-finite or reached :data:`EXPLODING` x its
    first step's."""
    norms = grad_norms(probe)
    if len(norms) < 2 or not math.isfinite(norms[0]):
        return False
    return any(not math.isfinite(n) or n >= EXPLODING * max(norms[0], 1e-12)
               for n in norms[1:])


def finite_losses(probe: ProbeReport) -> list[float]:
    """The losses before the first non-finite one."""
    out: list[float] = []
    for step in probe.steps:
        if step.loss is None:
            continue
        if not math.isfinite(step.loss):
            break
        out.append(step.loss)
    return out


def grew(probe: ProbeReport) -> bool:
    """The loss grew to :data:`GROWTH` x its lowest earlier value before going non-finite."""
    losses = finite_losses(probe)
    return len(losses) >= 2 and losses[-1] >= GROWTH * max(min(losses), 1e-12)


def diverged(probe: ProbeReport) -> bool:
    """A recorded learning rate, and a loss that grew (:func:`grew`) or a gradient norm
    that exploded (:func:`exploding`) before the non-finite step: a sudden NaN from a
    finite, level loss (``log(0)``, a mean over no targets) is not a divergence."""
    return any(s.lr is not None and s.lr > 0 for s in probe.steps) \
        and (grew(probe) or exploding(probe))


def _history(values: list[float], ends: int = 3) -> str:
    """``values`` as text, the first and last ``ends`` of a longer list around "..."."""
    def text(part: list[float]) -> str:
        return ", ".join(f"{v:.4g}" for v in part)
    if len(values) <= 2 * ends:
        return text(values)
    return f"{text(values[:ends])}, ..., {text(values[-ends:])}"


def divergence_evidence(probe: ProbeReport) -> list[str]:
    """The evidence lines of a diverging loss: the loss history before the non-finite
    step (and whether it grew), the gradient norms of a hand loop, the inputs' scale."""
    lines = []
    losses = finite_losses(probe)
    if losses:
        growth = f"; it grew to {losses[-1] / max(min(losses), 1e-300):.3g} x its lowest" \
            if grew(probe) else "; no growth before it"
        lines.append(f"loss over steps 1-{len(losses)}: {_history(losses)}{growth}")
    norms = grad_norms(probe)
    if norms:
        lines.append(f"gradient norm over steps 1-{len(norms)}: {_history(norms)}"
                     + (" (exploding)" if exploding(probe) else ""))
    for fact in unscaled_inputs(probe):
        lines.append(f"input {fact['name']} of the model call on line {fact.get('line', 0)} "
                     f"(shape {fact.get('shape')}): values up to {_float(fact['abs_max']):.4g}, "
                     f"a column's std up to {_float(fact.get('column_std')):.4g}: not "
                     "standardised")
    return lines


#: ``via`` of the trial a run gets whose loss grew but stayed finite (:func:`growing_loss`).
GROWING_TRIAL = "loss-grows"
#: Fewest finite steps for :func:`growing_loss` (two windows of 3 to compare).
GROWING_MIN_STEPS = 6


def growing_loss(run: RunResult) -> Diagnosis | None:
    """A trial for a run that ended without a fault while its loss grew: the first cause
    of :data:`DIVERGENCE_CAUSES` the evidence shows (``diverging-lr`` when none does), its
    fix kept only when the next run's loss is finite and falling. It grew: every loss
    finite, the mean of its last ``w`` steps (``w``: 10, or a third of the steps when
    fewer than 30 ran) at least :data:`GROWTH` x the first ``w`` steps' mean, and a
    learning rate recorded. No healthy run does that (a fine-tuning loss
    starts at chance and falls; a stalled one stays level). ``None`` otherwise."""
    losses = [s.loss for s in run.probe.steps if s.loss is not None]
    rates = [s.lr for s in run.probe.steps if s.lr is not None and s.lr > 0]
    if len(losses) < GROWING_MIN_STEPS or not rates \
            or not all(math.isfinite(x) for x in losses):
        return None
    w = min(10, len(losses) // 3)
    first, last = sum(losses[:w]) / w, sum(losses[-w:]) / w
    if not first > 0 or last < GROWTH * first:
        return None
    evidence = (f"the loss grew without turning non-finite: mean {first:.4g} over steps "
                f"1-{w}, {last:.4g} over steps {len(losses) - w + 1}-{len(losses)} "
                f"({last / first:.3g} x) at a learning rate of {max(rates):g}")
    cause = next((r.category for r in DIVERGENCE_CAUSES if r.found(run.probe)),
                 "diverging-lr")
    return Diagnosis(
        category=cause, evidence=f"{evidence}; root cause: {cause}",
        details=(evidence, *divergence_evidence(run.probe),
                 "a trial: the fix is kept only if the next run's loss is finite and "
                 "falling"),
        via=GROWING_TRIAL, causes=(cause,), facts=(("lr", repr(max(rates))),),
        hint="the first cause the evidence shows, as for a non-finite loss")


#: The rules naming ``nan-loss``'s fixable causes, in the order they are tried.
DIVERGENCE_CAUSES: tuple[RootCause, ...] = (
    RootCause("unscaled-inputs", lambda p: bool(unscaled_inputs(p)),
              f"float inputs with values over {INPUT_SCALE:g} (not standardised)"),
    RootCause("exploding-gradients", exploding,
              f"a gradient norm {EXPLODING:g} x its first step's, or non-finite"),
    RootCause("diverging-lr", diverged,
              "a loss that grew, or a gradient norm that exploded, at the rate it stepped with"),
)

DIVERGENCE: tuple[Category, ...] = (
    Category(
        id="unscaled-inputs",
        title="numeric inputs far from unit scale make the loss diverge",
        hint="standardise the inputs where they are made: (x - mean) / std per feature",
        kind=Kind.ROOT_CAUSE,
        proof=Proof(falling=True),
    ),
    Category(
        id="exploding-gradients",
        title="the gradient norm explodes in a training loop without clipping",
        hint="clip the gradient norm before optimizer.step(): "
             "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)",
        kind=Kind.ROOT_CAUSE,
        proof=Proof(falling=True),
    ),
    Category(
        id="diverging-lr",
        trial=growing_loss,
        title="a learning rate too high for the problem makes the loss diverge",
        hint="divide the learning rate by 10; kept only if the next run's loss is finite "
             "and falling",
        kind=Kind.ROOT_CAUSE,
        proof=Proof(falling=True),
    ),
)
