"""Root causes of a stall named by the execution evidence of the optimizer step.

The child reads each optimizer step (``autofix/run/child/evidence.py``: weights unchanged
by the step, gradients missing at it, the learning rate of every group, the optimizer's
scheduler, the update-to-weight ratio) and, when that evidence decides a stall, sends its
cause in the ``step_evidence`` event (``ProbeReport.facts["step_evidence"]["cause"]``).
Two causes are categories of their own (a hand loop's statement order); the others name
an existing category (``lr-too-high``) or are advice on the ``stalled-loss`` verdict
(:func:`evidence_advice`: a learning rate of 0, no gradient reaching the weights, an
optimizer over other parameters, a frozen base).
"""

from __future__ import annotations

from autofix.categories.model import Category, Kind, RootCause
from autofix.types import ProbeReport


def step_cause(probe: ProbeReport) -> str:
    """The cause the optimizer-step evidence named (``""``: none)."""
    evidence = probe.facts.get("step_evidence")
    cause = evidence.get("cause") if isinstance(evidence, dict) else None
    return cause if isinstance(cause, str) else ""


def _zero_grad_before_step(probe: ProbeReport) -> bool:
    """Gradients missing or zero at every step of a window while ``backward()`` and
    ``zero_grad()`` both ran between the steps (the child's ``zero-grad-before-step``)."""
    return step_cause(probe) == "zero-grad-before-step"


def _scheduler_not_stepped(probe: ProbeReport) -> bool:
    """The learning rate 0 at every step of a window, the weights unchanged, and the
    optimizer's lr scheduler not stepped during it (the child's ``scheduler-not-stepped``)."""
    return step_cause(probe) == "scheduler-not-stepped"


#: Advice by the evidence's cause, for the causes that have no category of their own.
ADVICE = {
    "lr-zero": "the learning rate is 0, so optimizer.step() changes nothing: set a "
               "learning rate above 0 (and check a scheduler's num_training_steps and "
               "warmup against the real number of optimizer steps)",
    "no-gradients": "no gradient reaches the trained weights at optimizer.step(): check "
                    "that loss.backward() runs on a loss computed from the model's outputs "
                    "(not detached, not under torch.no_grad()) before each step",
    "other-parameters": "the optimizer holds none of the trained model's parameters: "
                        "build it from this model's parameters (model.parameters()) after "
                        "the model is created or replaced",
    "frozen-base": "the base model is frozen (requires_grad=False) and only the new head "
                   "learns: unfreeze the base, or raise the head's learning rate",
}


def evidence_advice(probe: ProbeReport) -> str:
    """The advice for a stall whose evidence cause has no category (``""``: none)."""
    return ADVICE.get(step_cause(probe), "")


STEP_CAUSES: tuple[RootCause, ...] = (
    RootCause("zero-grad-before-step", _zero_grad_before_step,
              "zero_grad() between backward() and step(): the optimizer steps on no "
              "gradients"),
    RootCause("scheduler-stepped-per-epoch", _scheduler_not_stepped,
              "an lr scheduler that counts optimizer steps, stepped once per epoch"),
)


def _scheduler_advice(probe: ProbeReport) -> str:
    return ("call scheduler.step() inside the batch loop, right after optimizer.step(): the "
            "schedule (warmup and decay) is sized in optimizer steps, and stepped once per "
            "epoch it stays at its first value (0 for a warmup) for the whole first epoch")


#: Root causes of a stall the step evidence names (a recipe, or advice).
ROOT_CAUSES: tuple[Category, ...] = (
    Category(
        id="zero-grad-before-step",
        title="optimizer.zero_grad() between loss.backward() and optimizer.step(): every "
              "step is taken on cleared gradients",
        hint="clear the gradients after optimizer.step() (or before loss.backward())",
        kind=Kind.ROOT_CAUSE,
    ),
    Category(
        id="zero-grad-missing",
        title="a hand loop that steps its optimizer but never clears the gradients: every "
              "step adds this batch's gradients to all the earlier ones",
        hint="call optimizer.zero_grad() after each optimizer.step() (a run finding: the "
             "probe counts steps, backward() and zero_grad() calls)",
        kind=Kind.ROOT_CAUSE,
    ),
    Category(
        id="eval-without-eval-mode",
        title="a model with dropout or batch norm evaluated under no_grad while still in "
              "training mode: its outputs are noisy and batch norm learns from the test data",
        hint="call model.eval() before the evaluation forwards and model.train() before "
             "training resumes (a run finding: the probe counts dropout and batch norm "
             "calls under no_grad in training mode)",
        kind=Kind.ROOT_CAUSE,
    ),
    Category(
        id="scheduler-stepped-per-epoch",
        title="a learning-rate schedule sized in optimizer steps but stepped once per epoch",
        hint="call scheduler.step() after each optimizer.step(), inside the batch loop",
        advice=_scheduler_advice,
        no_recipe="moving scheduler.step() into the batch loop changes the schedule the "
                  "script asks for (its num_training_steps may be counted in epochs): the "
                  "change is named, not made",
        kind=Kind.ROOT_CAUSE,
    ),
    Category(
        id="eval-loader-shuffled",
        title="predictions gathered over an evaluation DataLoader built with shuffle=True and "
              "compared with labels kept in the dataset's order: the accuracy falls to chance",
        hint="build the evaluation loader with shuffle=False, or take the labels from the "
             "same batches as the predictions (a source finding: "
             "autofix/toolkit/source_findings.py)",
        kind=Kind.ROOT_CAUSE,
    ),
    Category(
        id="stats-before-split",
        title="normalisation statistics (mean/std, min/max, a scaler's fit) computed on all "
              "rows before they are split into train and test: the test rows leak into "
              "training",
        hint="split first, compute the statistics on the training rows only and apply them "
             "to both splits (a source finding: autofix/toolkit/source_findings.py)",
        no_recipe="where the split belongs and which rows are the training rows is the "
                  "script's data flow: the finding names the lines, the change is not made",
        kind=Kind.ROOT_CAUSE,
    ),
)
