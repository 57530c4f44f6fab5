"""Training symptoms the probe confirms while the script trains (no traceback), the root
causes behind them that have recipes, and the trial a healthy but slow run gets."""

from __future__ import annotations

from autofix.categories.catalogue.course import label_count_advice
from autofix.categories.catalogue.divergence import DIVERGENCE_CAUSES
from autofix.categories.catalogue.evidence import STEP_CAUSES, step_cause
from autofix.categories.model import Category, Kind, RootCause
from autofix.run.child.contract import PROBABILITY_LOSSES
from autofix.types import Diagnosis, ProbeReport, RunResult

#: Learning rates at or above this are too high to fine-tune a pretrained transformer: the
#: HF course (chapter 8) advises 1e-5 to 1e-4; 1e-3 is Adam's and Keras' "adam" default.
LR_TOO_HIGH = 1e-3



def _keras_string_loss(probe: ProbeReport) -> bool:
    """A Keras cross-entropy that reads probabilities (a string name or loss function of
    :data:`PROBABILITY_LOSSES`, or a loss object with ``from_logits=False``) on a Hugging
    Face model, which outputs logits: the loss is computed on the wrong quantity. The
    model's internal loss (``compile`` without ``loss``: Hugging Face's ``dummy_loss``) and
    a loss object with ``from_logits=True`` are not this fault."""
    return any(k.hf_model and (k.loss in PROBABILITY_LOSSES or k.from_logits is False)
               for k in probe.keras)


def _lr_too_high(probe: ProbeReport) -> bool:
    """A learning rate at or above :data:`LR_TOO_HIGH` at any recorded step, or an update
    -to-weight ratio far above fine-tuning's in the optimizer-step evidence."""
    rates = [s.lr for s in probe.steps if s.lr is not None]
    return bool(rates) and max(rates) >= LR_TOO_HIGH * (1 - 1e-6) \
        or step_cause(probe) == "lr-too-high"  # float32 1e-3 > 1e-3


#: ``via`` of a diagnosis made from a healthy run that was not clearly learning (the
#: ``learning-slowly`` finding): its fix is a trial, kept only when the next run proves it.
SLOW_TRIAL = "learning-slowly"


def slow_at_high_lr(run: RunResult) -> Diagnosis | None:
    """``lr-too-high`` for a healthy run that ended with the finding ``learning-slowly``
    (not clearly under chance, no stall proven) at a learning rate of 1e-3 or more (the
    stall's ``lr-too-high`` root-cause rule), else ``None``.

    Not a verdict on its own: Adam at 1e-3 on MiniLM may stall flat at ln C, or learn and
    come back up to chance within one run (the course's TF script, 75 steps, three
    unseeded runs measured 2026-12-01: flat at 1.099 twice, once down to 0.97 and back to
    1.11, which the stall rule calls "learning slowly"). So the fix it leads to is a trial
    (``via`` :data:`SLOW_TRIAL`): the next run must show the loss clearly under chance, or
    the fix is dropped and the session ends as it stood. Not for a head trained on a frozen
    base (the step evidence's ``frozen``): a linear probe's usual rate is 1e-4 to 1e-3
    (:data:`autofix.run.child.evidence.PROBE_LR`).
    """
    slow = next((f for f in run.probe.findings if f.kind == "learning-slowly"), None)
    evidence = run.probe.facts.get("step_evidence")
    if isinstance(evidence, dict) and evidence.get("frozen") is True:
        return None  # a head on a frozen base (a linear probe): 1e-3 is its usual rate
    if slow is None or not _lr_too_high(run.probe):
        return None
    rates = [s.lr for s in run.probe.steps if s.lr is not None]
    return _trial(f"not clearly learning at a learning rate of {max(rates):g}: "
                  f"{slow.evidence}", (slow.evidence, f"learning rate: {max(rates):g}"))


def _trial(evidence: str, details: tuple[str, ...]) -> Diagnosis:
    """The ``lr-too-high`` trial diagnosis: ``evidence``, then ``details`` and what the
    trial owes."""
    return Diagnosis(
        category="lr-too-high",
        evidence=evidence,
        details=(*details, "a trial: the lower learning rate is kept only if the next run's "
                           "loss gets clearly under chance"),
        via=SLOW_TRIAL,
        causes=("lr-too-high",),
        hint="a learning rate of 1e-3 or more is far above what fine-tuning a pretrained "
             "transformer uses (the course: 2e-5 to 5e-5)",
    )


def fast_on_pretrained(run: RunResult) -> Diagnosis | None:
    """``lr-too-high`` for a healthy classifier run at a learning rate of
    :data:`LR_TOO_HIGH` or more whose Adam-like optimizer moved the pretrained weight
    matrices far faster than fine-tuning does (the child's ``step_evidence`` summary:
    ``fast``, set at an update-to-weight ratio of ``evidence.RATIO_TRIAL`` or more, and the
    ``ratio``), else ``None``. Both are needed: the ratio depends on the weights' scale (a
    small checkpoint's weights move faster at the same rate), the rate alone on nothing
    the run showed.

    Such a rate learns in some runs and stalls at chance in others of the same script
    (Keras ``"adam"``, 1e-3, MiniLM-L6: ``benchmarks/bench_keras_adam.py``, one session in
    five learned at 1e-3 and was called healthy): the verdict must not depend on which
    run it was. A trial like :func:`slow_at_high_lr`: the lower rate is kept only if the
    next run's loss also gets clearly under chance."""
    evidence = run.probe.facts.get("step_evidence")
    rates = [s.lr for s in run.probe.steps if s.lr is not None]
    if not isinstance(evidence, dict) or evidence.get("fast") is not True \
            or not rates or max(rates) < LR_TOO_HIGH * (1 - 1e-6):  # float32 1e-3
        return None
    ratio = evidence.get("ratio")
    lr = f" (learning rate {max(rates):g})"
    optimizer = evidence.get("optimizer") or "the optimizer"
    moved = f"by a median update-to-weight ratio of {ratio:.1e} per step" \
        if isinstance(ratio, (int, float)) else "far faster than fine-tuning does"
    line = (f"no stall, but {optimizer}{lr} moves the pretrained weight matrices "
            f"{moved} (fine-tuning rates: at most 4.3e-4)")
    return _trial(line, (line, "at such a rate the same script stalls at chance in some "
                               "runs and learns in others"))


def lr_trial(run: RunResult) -> Diagnosis | None:
    """The ``lr-too-high`` trial of a healthy run: :func:`slow_at_high_lr` for one not
    clearly learning, :func:`fast_on_pretrained` for one learning at a rate that moves a
    pretrained model far faster than fine-tuning; ``None`` otherwise."""
    return slow_at_high_lr(run) or fast_on_pretrained(run)


SYMPTOMS: tuple[Category, ...] = (
    Category(
        id="nan-loss",
        advice=label_count_advice,
        no_recipe="no recipe for it",
        title="the loss became NaN or infinite",
        hint="the evidence names the first non-finite step, the loss and gradient norm "
             "before it, the inputs' scale and the samples of that batch",
        kind=Kind.SYMPTOM,
        root_causes=DIVERGENCE_CAUSES,
        alternatives=True,
    ),
    Category(
        id="stalled-loss",
        no_recipe="no recipe for it",
        title="the loss stays near the chance level ln(C) or stops falling",
        hint="root causes with a recipe: a Keras loss on logits, a learning rate of 1e-3 or "
             "more, zero_grad() between backward() and step(); the step evidence names the "
             "others (a learning rate of 0, no gradients, a frozen base)",
        kind=Kind.SYMPTOM,
        root_causes=(
            *STEP_CAUSES,
            RootCause("keras-string-loss", _keras_string_loss,
                      "a string Keras loss on a model that outputs logits"),
            RootCause("lr-too-high", _lr_too_high, "a learning rate of 1e-3 or more"),
        ),
    ),
)

#: Root causes of a symptom: they have recipes but no traceback of their own.
ROOT_CAUSES: tuple[Category, ...] = (
    Category(
        id="keras-string-loss",
        title="a Keras loss given as a string (from_logits=False) on a model that outputs "
              "logits",
        hint="drop loss= so the model computes its own loss on the logits, or pass a loss "
             "with from_logits=True",
        kind=Kind.ROOT_CAUSE,
    ),
    Category(
        id="lr-too-high",
        trial=lr_trial,
        title="a learning rate of 1e-3 or more on a pretrained transformer",
        kind=Kind.ROOT_CAUSE,
    ),
)

