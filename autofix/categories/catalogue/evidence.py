"""Root causes of a stall named by the execution evidence of the optimizer step.

The child reads each optimizer step (``autofix/run/child/evidence.py``: weights unchanged
by the step, gradients missing at it, the learning rate of every group, the optimizer's
scheduler, the update-to-weight ratio) and, when that evidence decides a stall, sends its
cause in the ``step_evidence`` event (``ProbeReport.facts["step_evidence"]["cause"]``).
Four causes are categories of their own (a hand loop's statement order, an optimizer
built before the model it should train was replaced, a schedule stepped at the wrong loop
level: the child's ``schedule`` facts); the others name an existing category
(``lr-too-high``) or are advice on the ``stalled-loss`` verdict (:func:`evidence_advice`: a
learning rate of 0, no gradient reaching the weights, a frozen base).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autofix.categories.model import Category, Kind, Proof, RootCause
from autofix.categories.proofs import rate_back_to_zero
from autofix.types import Finding, ProbeReport, RunResult, SourceFacts


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
    optimizer's lr scheduler not stepped during it (the child's ``scheduler-not-stepped``),
    or a schedule the child judged sized in optimizer steps and stepped less often."""
    return step_cause(probe) == "scheduler-not-stepped" or \
        misstepped_schedule(probe, STEPS) is not None


#: ``sized`` of a schedule the child judged (``autofix/run/child/schedules.py``): counted
#: in epochs but stepped after every optimizer step, or counted in optimizer steps but
#: stepped less often.
EPOCHS, STEPS = "epochs", "steps"


def misstepped_schedule(probe: ProbeReport, sized: str) -> dict[str, Any] | None:
    """The first lr schedule of the run's ``train_facts`` (``schedule``) the child judged
    ``sized`` (:data:`EPOCHS`: stepped after every optimizer step; :data:`STEPS`: stepped
    less often), else ``None``."""
    for entry in probe.facts.get("schedule") or []:
        if isinstance(entry, dict) and entry.get("sized") == sized:
            return entry
    return None


def explained_stall(probe: ProbeReport) -> bool:
    """The run's own evidence names the cause of its stall, a fault of the training step
    (the optimizer step's evidence: gradients cleared before the step, a rate of 0, no
    gradients, other parameters; or a schedule stepped at the wrong loop level), so a
    generic cause (a learning rate of 1e-3 or more) is not proposed beside it."""
    cause = step_cause(probe)
    return bool(cause) and cause not in ("lr-too-high", "frozen-base") or \
        misstepped_schedule(probe, EPOCHS) is not None or \
        misstepped_schedule(probe, STEPS) is not None


def _scheduler_per_batch(probe: ProbeReport) -> bool:
    """A schedule counted in epochs (its rate collapses within the first epoch when
    stepped per batch) stepped after every optimizer step."""
    return misstepped_schedule(probe, EPOCHS) is not None


def schedule_text(entry: dict[str, Any]) -> str:
    """``StepLR(step_size=1, gamma=0.1)``: a schedule entry's class and parameters."""
    params = entry.get("params")
    params = params if isinstance(params, dict) else {}
    shown = ", ".join(f"{k}={v}" for k, v in params.items())
    return f"{entry.get('class', 'the scheduler')}({shown})"


def schedule_evidence(entry: dict[str, Any]) -> str:
    """The evidence line of a schedule stepped at the wrong loop level, in the run's
    numbers: the class and parameters, how often the script stepped it, where, and where
    the rate collapses."""
    site = entry.get("site")
    site = site if isinstance(site, dict) else {}
    where = f" at {site.get('file')}:{site.get('line')}" if site else ""
    per_epoch, epochs = entry.get("per_epoch"), entry.get("epochs")
    loop = f"a loop of {epochs} epoch{'s' if epochs != 1 else ''} x {per_epoch} optimizer steps"
    if entry.get("sized") == EPOCHS:
        return (f"{schedule_text(entry)} is stepped after every optimizer step"
                f"{where} ({entry.get('calls')} calls in {entry.get('optimizer_steps')} "
                f"steps) in {loop}: its rate falls under 1/100 of its peak at call "
                f"{entry.get('collapse_step')}, within the first epoch, while stepped once "
                "per epoch it stays above that to the end: its schedule counts epochs")
    return (f"{schedule_text(entry)} is stepped {entry.get('calls')} times in "
            f"{entry.get('optimizer_steps')} optimizer steps{where} in {loop}: stepped once "
            f"per epoch its first epoch runs at {entry.get('first_epoch'):.3g} x the peak "
            "rate, while stepped after each optimizer step it rises within the first epoch "
            "and lasts to the end: its schedule counts optimizer steps")


#: Advice by the evidence's cause, for the causes that have no category of their own.
ADVICE = {
    "lr-zero": "the learning rate is 0, so optimizer.step() changes nothing: set a "
               "learning rate above 0 (and check a scheduler's num_training_steps and "
               "warmup against the real number of optimizer steps)",
    "no-gradients": "no gradient reaches the trained weights at optimizer.step(): check "
                    "that loss.backward() runs on a loss computed from the model's outputs "
                    "(not detached, not under torch.no_grad()) before each step",
    "frozen-base": "the base model is frozen (requires_grad=False) and only the new head "
                   "learns: unfreeze the base, or raise the head's learning rate",
}


def evidence_advice(probe: ProbeReport) -> str:
    """The advice for a stall whose evidence cause has no category (``""``: none)."""
    return ADVICE.get(step_cause(probe), "")


def _optimizer_before_model(probe: ProbeReport) -> bool:
    """None of the trained model's trainable tensors in the optimizer's groups, the sampled
    weights unchanged and the optimizer's own parameters without gradients over a window
    (the child's ``other-parameters``)."""
    return step_cause(probe) == "other-parameters"


STEP_CAUSES: tuple[RootCause, ...] = (
    RootCause("zero-grad-before-step", _zero_grad_before_step,
              "zero_grad() between backward() and step(): the optimizer steps on no "
              "gradients"),
    RootCause("optimizer-before-model", _optimizer_before_model,
              "an optimizer over the parameters of a model (or head) the script replaced "
              "after building it"),
    RootCause("scheduler-stepped-per-epoch", _scheduler_not_stepped,
              "an lr scheduler that counts optimizer steps, stepped once per epoch"),
    RootCause("scheduler-stepped-per-batch", _scheduler_per_batch,
              "an lr scheduler that counts epochs, stepped after every optimizer step"),
)


def _scheduler_advice(probe: ProbeReport) -> str:
    entry = misstepped_schedule(probe, STEPS)
    seen = f"{schedule_evidence(entry)}; " if entry is not None else ""
    return (f"{seen}call scheduler.step() inside the batch loop, right after "
            "optimizer.step(): the schedule (warmup and decay) is sized in optimizer steps, "
            "and stepped once per epoch it stays at its first value (0 for a warmup) for "
            "the whole first epoch")


def _per_batch_advice(probe: ProbeReport) -> str:
    entry = misstepped_schedule(probe, EPOCHS)
    seen = f"{schedule_evidence(entry)}; " if entry is not None else ""
    return (f"{seen}call scheduler.step() once per epoch, after the batch loop (inside the "
            "epoch loop): the schedule's step_size, milestones or T_max count epochs")


def _optimizer_never_steps(run: RunResult) -> list[Finding]:
    """``optimizer-never-steps``: a hand loop whose ``backward()`` ran twice or more while
    ``optimizer.step()`` never did (the run's ``backward_calls``, ``optimizer_steps``)."""
    facts = run.probe.facts
    steps, backward = facts.get("optimizer_steps", 0), facts.get("backward_calls", 0)
    if not isinstance(backward, int) or backward < 2 or steps != 0:
        return []
    return [Finding("optimizer-never-steps", 0,
                    f"loss.backward() ran {backward} times but optimizer.step() never did: "
                    "the model never changes (a missing optimizer.step(), or a gradient "
                    "accumulation that does not step within the run)")]


def _zero_grad_missing(run: RunResult) -> list[Finding]:
    """``zero-grad-missing``: two or more optimizer steps after ``backward()`` and not one
    ``zero_grad()`` call (the run's ``optimizer_steps``, ``zero_grad_calls``)."""
    facts = run.probe.facts
    steps, backward = facts.get("optimizer_steps", 0), facts.get("backward_calls", 0)
    if not isinstance(steps, int) or steps < 2 or not backward \
            or facts.get("zero_grad_calls") != 0:
        return []
    return [Finding("zero-grad-missing", 0,
                    f"{steps} optimizer steps and no zero_grad(): gradients add up from step "
                    "to step (call optimizer.zero_grad() at the top of each step, before the "
                    "forward)")]


def train_mode_eval(run: RunResult) -> Finding | None:
    """``eval-without-eval-mode``: a forward of the user's model in training mode whose
    output was not trained on (the probe's ``train_mode_evals``: a call site whose forwards
    ran under ``torch.no_grad()`` / ``torch.inference_mode()``, or whose outputs no
    ``backward()`` reached by the end of the run), the model holding a dropout (p > 0) or
    a batch norm layer: its outputs are noisy and batch norm learns from the evaluated
    data. A forward with gradients on made before the first optimizer step (``after_step``
    0) and never backpropagated is a look at the untrained model's outputs (the course's
    ``outputs = model(**batch)`` on one batch before the loop), not an evaluation: it gives
    no finding. The evidence names the first such line. ``None`` when the facts are missing
    or there is no such site."""
    sites = [s for s in run.probe.facts.get("train_mode_evals") or [] if isinstance(s, dict)
             and (s.get("no_grad") or (s.get("after_step") or 0) > 0)]
    if not sites:
        return None
    first = sites[0]
    how = "under no_grad" if first.get("no_grad") else \
        "with gradients on, its outputs never backpropagated"
    calls = sum(int(s.get("calls") or 0) for s in sites)
    evals = run.probe.facts.get("no_grad_eval_calls") or 0
    return Finding("eval-without-eval-mode", 0,
                   f"the model was evaluated in training mode at {first.get('file')}:"
                   f"{first.get('line')} ({first.get('model')} with {first.get('layer')}, "
                   f"{how}): {calls} forwards not trained on without model.eval() "
                   f"({evals} in eval mode), so dropout stays on and batch norm normalises "
                   "with each evaluated batch (and updates its running statistics from it): "
                   "call model.eval() before evaluating and model.train() before training "
                   "again")


def _train_mode_eval(run: RunResult) -> list[Finding]:
    found = train_mode_eval(run)
    return [found] if found is not None else []


def misstepped_findings(sized: str, kind: str) -> Callable[[RunResult], list[Finding]]:
    """The findings hook of a schedule stepped at the wrong loop level: ``kind`` (the
    category's id) for the first lr schedule of the run's ``schedule`` facts the child
    judged ``sized`` (:data:`EPOCHS`: counted in epochs and stepped after every optimizer
    step; :data:`STEPS`: counted in optimizer steps and stepped less often)."""
    def found(run: RunResult) -> list[Finding]:
        entry = misstepped_schedule(run.probe, sized)
        return [Finding(kind, 0, schedule_evidence(entry))] if entry is not None else []
    return found


def _shuffled_evaluations(facts: SourceFacts) -> list[Finding]:
    """``eval-loader-shuffled``: each evaluation loop the source reader found iterating a
    loader built with ``shuffle=True`` while collecting outputs without the batches'
    labels (the reading ``shuffled-evaluations``)."""
    out = []
    for ev in facts["shuffled-evaluations"]:
        built = ", ".join(str(line) for line in ev["built_at"])
        out.append(Finding(
            "eval-loader-shuffled", 0,
            f"line {ev['line']}: the evaluation loop over `{ev['loader']}` (no backward(), no "
            f"step()) collects its outputs without the batches' labels, and that DataLoader "
            f"is built with shuffle=True (line {built}): the predictions come in shuffled "
            "order while the labels they are compared with keep the dataset's order, so the "
            "accuracy is at chance; build the evaluation loader with shuffle=False"))
    return out


def schedule_holds(sized: str, kind: str) -> Callable[[RunResult], str]:
    """The invariant a fix of a schedule stepped at the wrong level (``kind``, judged
    ``sized`` before it) owes on the run after it: the schedule no longer judged ``sized``,
    and the learning rate not back at 0 before the last step (a warmup's first steps at 0
    are no fault)."""
    def holds(after: RunResult) -> str:
        if misstepped_schedule(after.probe, sized) is not None:
            return f"{kind} is still found after it"
        zero = rate_back_to_zero(after.probe.steps)
        return f"the learning rate is 0 from step {zero}, before training ends" if zero else ""
    return holds


#: What the run after a fix of a hand loop's training step must show: the finding gone,
#: the script's own evaluation no worse; reached through a stall, a loss finite and falling
#: (not one clearly under chance: a script of 16 steps that learns from its fixed step
#: ends its last 10 steps near chance, val acc 0.98, measured on the mutation benchmark's
#: ``loop_minilm``).
INVARIANT = Proof(invariant=True, falling=True)


#: Root causes of a stall the step evidence names (a recipe, or advice), and what the
#: facts of a hand loop's training step show on a run that raised nothing (findings, in the
#: order they are reported).
ROOT_CAUSES: tuple[Category, ...] = (
    Category(
        id="zero-grad-before-step",
        title="optimizer.zero_grad() between loss.backward() and optimizer.step(): every "
              "step is taken on cleared gradients",
        hint="clear the gradients at the top of the step, before the forward (not between "
             "loss.backward() and optimizer.step())",
        kind=Kind.ROOT_CAUSE,
        proof=INVARIANT,
    ),
    Category(
        id="optimizer-before-model",
        title="an optimizer built over a model (or a head) the script replaces afterwards: "
              "it steps parameters no longer trained, and the trained model never changes",
        hint="build the optimizer after the model (and its new head) it trains is made, "
             "from that model's parameters",
        kind=Kind.ROOT_CAUSE,
        proof=INVARIANT,
    ),
    Category(
        id="optimizer-never-steps",
        title="a hand loop that calls loss.backward() but never optimizer.step(): the model "
              "never changes",
        hint="call optimizer.step() after loss.backward() (a run finding: the probe counts "
             "backward() calls and optimizer steps)",
        no_recipe="where the step belongs (every batch, or every few batches of a gradient "
                  "accumulation) is the script's design: the finding names the counts",
        kind=Kind.FINDING,
        findings=_optimizer_never_steps,
    ),
    Category(
        id="zero-grad-missing",
        title="a hand loop that steps its optimizer but never clears the gradients: every "
              "step adds this batch's gradients to all the earlier ones",
        hint="call optimizer.zero_grad() at the top of each training step, before the "
             "forward (a run finding: the probe counts steps, backward() and zero_grad() "
             "calls)",
        kind=Kind.ROOT_CAUSE,
        findings=_zero_grad_missing,
        proof=INVARIANT,
    ),
    Category(
        id="eval-without-eval-mode",
        title="a model with dropout or batch norm evaluated while still in training "
              "mode: its outputs are noisy and batch norm learns from the test data",
        hint="call model.eval() before the evaluation forwards and model.train() before "
             "training resumes (a run finding: the probe follows every forward of the "
             "model in training mode that no backward() reached, or that ran under "
             "no_grad)",
        kind=Kind.ROOT_CAUSE,
        findings=_train_mode_eval,
        proof=INVARIANT,
    ),
    Category(
        id="scheduler-stepped-per-batch",
        title="a learning-rate schedule counted in epochs but stepped after every optimizer "
              "step: the rate collapses within the first epoch",
        hint="call scheduler.step() once per epoch, after the batch loop (a run finding: the "
             "probe compares the scheduler's class and parameters with the loop's epochs "
             "and batches, and counts its step() calls)",
        advice=_per_batch_advice,
        kind=Kind.ROOT_CAUSE,
        findings=misstepped_findings(EPOCHS, "scheduler-stepped-per-batch"),
        proof=Proof(invariant=True, falling=True,
                    holds=schedule_holds(EPOCHS, "scheduler-stepped-per-batch")),
    ),
    Category(
        id="scheduler-stepped-per-epoch",
        title="a learning-rate schedule sized in optimizer steps but stepped once per epoch",
        hint="call scheduler.step() after each optimizer.step(), inside the batch loop",
        advice=_scheduler_advice,
        kind=Kind.ROOT_CAUSE,
        findings=misstepped_findings(STEPS, "scheduler-stepped-per-epoch"),
        proof=Proof(invariant=True, falling=True,
                    holds=schedule_holds(STEPS, "scheduler-stepped-per-epoch")),
    ),
    Category(
        id="eval-loader-shuffled",
        title="predictions gathered over an evaluation DataLoader built with shuffle=True and "
              "compared with labels kept in the dataset's order: the accuracy falls to chance",
        hint="build the evaluation loader with shuffle=False, or take the labels from the "
             "same batches as the predictions (a source finding: "
             "autofix/toolkit/source_findings.py)",
        kind=Kind.ROOT_CAUSE,
        source_findings=_shuffled_evaluations,
    ),
)
