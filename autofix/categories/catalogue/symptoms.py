"""Training symptoms the probe confirms while the script trains (no traceback), the root
causes behind them that have recipes, the trial a healthy but slow run gets, and what the
losses and outputs of a run that trained without a fault still show (findings: learning
slowly, one class predicted for every row, float16 weights trained directly)."""

from __future__ import annotations

import math

from autofix.categories.catalogue.course import label_count_advice
from autofix.categories.catalogue.divergence import DIVERGENCE_CAUSES, divergence_evidence
from autofix.categories.catalogue.evidence import (
    STEP_CAUSES,
    evidence_advice,
    explained_stall,
    step_cause,
)
from autofix.categories.facts import all_ignored, all_ignored_text, sample_lines
from autofix.categories.model import Category, Kind, Proof, RootCause
from autofix.categories.registry import get_category
from autofix.run.child.contract import PROBABILITY_LOSSES
from autofix.run.child.symptoms import FLAT_EVIDENCE, STALL_RATIO, WINDOW, fit
from autofix.types import Diagnosis, Finding, ProbeReport, RunResult

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
    -to-weight ratio far above fine-tuning's in the optimizer-step evidence; never when that
    evidence named another cause of the stall."""
    if explained_stall(probe):
        return False  # the run's evidence named the stall's cause (gradients cleared before
        # the step, a schedule stepped at the wrong level): a rate of 1e-3 is not it
    rates = [s.lr for s in probe.steps if s.lr is not None]
    return bool(rates) and max(rates) >= LR_TOO_HIGH * (1 - 1e-6) \
        or step_cause(probe) == "lr-too-high"  # float32 1e-3 > 1e-3


#: The finding of a run not clearly learning (the child's final verdict, or a flat stall
#: with no known cause: :func:`unexplained_flat`); also the ``via`` of a diagnosis made from
#: such a healthy run: its fix is a trial, kept only when the next run proves it.
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
    slow = next((f for f in run.probe.findings if f.kind == SLOW_TRIAL), None)
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


#: The rules naming a stall's fixable causes, in the order they are tried.
STALL_CAUSES: tuple[RootCause, ...] = (
    *STEP_CAUSES,
    RootCause("keras-string-loss", _keras_string_loss,
              "a string Keras loss on a model that outputs logits"),
    RootCause("lr-too-high", _lr_too_high, "a learning rate of 1e-3 or more"),
)

#: Under this fraction of trainable parameters the base model counts as frozen (a
#: MiniLM-L6 classification head is 0.5 % of its 22.7 M parameters).
FROZEN_FRACTION = 0.05


def stall_advice(run: RunResult) -> list[str]:
    """Root causes of a stall that autofix reports with advice (no recipe is sure), found
    in the run's facts: a learning rate of 0 (a schedule that ends before the budget), a
    learning rate still rising (warmup longer than the budget), a frozen base model; first
    the cause the optimizer-step evidence named, when it has no category of its own."""
    step = evidence_advice(run.probe)
    out = [step] if step else []
    rates = [s.lr for s in run.probe.steps if s.lr is not None]
    zero = next((s.step for s in run.probe.steps if s.lr is not None and s.lr <= 1e-12), 0)
    if zero and zero < len(run.probe.steps):
        out.append(f"the learning rate is 0 from step {zero} on: the scheduler reaches 0 "
                   "before training ends (check num_training_steps of the scheduler against "
                   "the real number of optimizer steps)")
    elif len(rates) > 10 and rates[-1] > rates[len(rates) // 2] * 1.01 and \
            all(b >= a for a, b in zip(rates, rates[1:], strict=False)):
        out.append(f"the learning rate is still rising at step {len(rates)} "
                   f"({rates[-1]:g}): the warmup is longer than the training seen (lower "
                   "num_warmup_steps / warmup_ratio)")
    facts = run.probe.facts
    total, trainable = facts.get("params_total"), facts.get("params_trainable")
    if isinstance(total, int) and isinstance(trainable, int) and total:
        if trainable == 0:
            out.append("no parameter requires grad: nothing can learn")
        elif trainable / total < FROZEN_FRACTION:
            out.append(f"only {trainable:,} of {total:,} parameters "
                       f"({100 * trainable / total:.1f} %) are trainable: the base model is "
                       "frozen, only the new head learns (unfreeze it, or raise the lr)")
    return out


def unexplained_flat(run: RunResult) -> Finding | None:
    """The finding ``learning-slowly`` for a flat-loss stall verdict (the child's
    :meth:`LossMonitor.flat`: near chance, no significant fall) that has no known cause in
    the run's facts, else ``None``. A stall autofix can neither explain nor fix is not
    called a failure: no lr of 1e-3 or more, no lr of 0 or still warming up, no frozen
    base, no loss on logits. Measured on the false-alarm grid (2026-12-01): MiniLM at lr
    1e-5, batch 32, 2 classes, a hand loop of 75 steps falls 0.697 -> 0.686 with little
    noise; the flat rule called that a stall, and it was a slow, healthy run."""
    symptom = run.probe.symptom
    if symptom is None or symptom.kind != STALLED_LOSS.id \
            or not symptom.evidence.startswith(FLAT_EVIDENCE):
        return None
    if any(rule.found(run.probe) for rule in STALLED_LOSS.root_causes) or stall_advice(run) \
            or run.probe.faults:
        return None
    rates = [s.lr for s in run.probe.steps if s.lr is not None]
    lr = f"a learning rate of {max(rates):g}" if rates else "an unknown learning rate"
    return Finding(SLOW_TRIAL, symptom.step,
                   f"learning slowly: {symptom.evidence[len(FLAT_EVIDENCE):]}; no known cause "
                   f"of a stall ({lr}, trainable weights, a loss that fits the outputs), so "
                   "this is a finding, not a failure: train longer or raise the learning rate "
                   "if it should learn faster")


def stall_diagnosis(run: RunResult) -> Diagnosis:
    """The diagnosis of a stall the probe confirmed: its causes autofix can fix, found in
    the run's facts (:data:`STALL_CAUSES`: zero_grad() before step(), a schedule stepped at
    the wrong level, a string Keras loss on a Hugging Face model, a learning rate at or
    above 1e-3), all listed in ``causes`` and the first named; else ``stalled-loss`` with
    the advice :func:`stall_advice` gives as its hint."""
    symptom = run.probe.symptom
    assert symptom is not None
    causes = [rule.category for rule in STALLED_LOSS.root_causes if rule.found(run.probe)]
    rates = [s.lr for s in run.probe.steps if s.lr is not None]
    advice = stall_advice(run)
    found = f"; root causes: {', '.join(causes)}" if causes else \
        (f"; root cause: {advice[0]}" if advice else "; no known root cause")
    return Diagnosis(
        category=causes[0] if causes else STALLED_LOSS.id,
        evidence=symptom.evidence + found,
        details=(symptom.evidence, f"learning rate: {max(rates):g}" if rates else "lr unknown",
                 *advice),
        via=STALLED_LOSS.id if causes else "",
        causes=tuple(causes),
        hint=" ".join(advice) if advice and not causes else STALLED_LOSS.hint,
    )


def nan_diagnosis(run: RunResult) -> Diagnosis:
    """The diagnosis of a non-finite loss the probe confirmed, as the course reads one:
    what the first bad batch's per-sample losses and labels show (every label ignored,
    samples with a non-finite loss, float16 weights trained directly, or all finite), the
    loss and gradient history and the inputs' scale (:func:`divergence_evidence`), and the
    diverging loss's causes found in them (:data:`DIVERGENCE_CAUSES`, alternatives: the
    first is fixed first); none when every label of the batch is ignored (a mean over zero
    targets is no divergence). A cause another category claims from the batch (labels
    outside the head) is not this: ``Category.symptom_cause`` answers first."""
    symptom, probe = run.probe.symptom, run.probe
    assert symptom is not None
    samples = symptom.samples
    parts = [symptom.evidence]
    bad = [s for s in samples if s.loss is not None and not math.isfinite(s.loss)]
    if all_ignored(samples):
        parts.append(all_ignored_text(samples))
    elif bad:
        parts.append(f"non-finite per-sample losses at samples {[s.index for s in bad]} "
                     f"(labels {[s.label for s in bad]})")
    elif probe.facts.get("param_dtype") == "torch.float16":
        parts.append("face: float16 weights trained directly (the model's parameters are "
                     "torch.float16): overflow or an update under float16 resolution; load "
                     "the model in float32 and train with mixed precision (fp16=True / "
                     "torch.autocast) instead")
    elif samples:
        parts.append("every per-sample loss of that batch is finite; the NaN comes from "
                     "elsewhere (fp16 overflow, a learning rate far too high, log(0))")
    numeric = divergence_evidence(probe)
    causes = [] if all_ignored(samples) else \
        [rule.category for rule in NAN_LOSS.root_causes if rule.found(probe)]
    if causes:  # a diverging loss: its causes are alternatives, the first is tried first
        parts.append(f"root causes: {', '.join(causes)}")
    rates = [s.lr for s in probe.steps if s.lr is not None]
    return Diagnosis(category=causes[0] if causes else NAN_LOSS.id,
                     evidence="; ".join([*parts[:1], *numeric, *parts[1:]]),
                     details=(*numeric, *sample_lines(samples)),
                     via=NAN_LOSS.id if causes else "", causes=tuple(causes),
                     facts=(("lr", repr(max(rates))),) if rates else (),
                     hint=get_category(causes[0]).hint if causes else NAN_LOSS.hint)


NAN_LOSS = Category(
    id="nan-loss",
    advice=label_count_advice,
    no_recipe="no recipe for it",
    title="the loss became NaN or infinite",
    hint="the evidence names the first non-finite step, the loss and gradient norm "
         "before it, the inputs' scale and the samples of that batch",
    kind=Kind.SYMPTOM,
    root_causes=DIVERGENCE_CAUSES,
    alternatives=True,
    symptom_diagnosis=nan_diagnosis,
    proof=Proof(falling=True),  # repaired when the loss no longer diverges
)
STALLED_LOSS = Category(
    id="stalled-loss",
    no_recipe="no recipe for it",
    title="the loss stays near the chance level ln(C) or stops falling",
    hint="root causes with a recipe: a Keras loss on logits, a learning rate of 1e-3 or "
         "more, zero_grad() between backward() and step(); the step evidence names the "
         "others (a learning rate of 0, no gradients, a frozen base)",
    kind=Kind.SYMPTOM,
    root_causes=STALL_CAUSES,
    symptom_diagnosis=stall_diagnosis,
)
SYMPTOMS: tuple[Category, ...] = (NAN_LOSS, STALLED_LOSS)

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


#: Fewest labelled rows among the last training batches for the constant-prediction
#: finding (two batches of 16): fewer rows say little about what the model predicts.
CONSTANT_MIN_ROWS = 32
#: The other classes must hold at least this share of those rows ("the data has several").
CONSTANT_MIN_OTHERS = 0.1
#: Fewest optimizer steps for the constant-prediction finding: autofix's default budget.
#: A healthy model first learns the class frequencies, then the inputs: measured on a tiny
#: BERT with 80/20 labels it can learn (lr 1e-3, seeds 0-2), every row was predicted as
#: the majority class up to steps 30-40, never over steps 51-60.
CONSTANT_MIN_STEPS = 60


def label_entropy(labels: list[int]) -> float:
    """Entropy (nats) of the label frequencies in ``labels``: the cross-entropy of a model
    that predicts those frequencies for every row (it learned the classes' shares only)."""
    n = len(labels)
    counts = [labels.count(c) for c in sorted(set(labels))]
    return -sum(k / n * math.log(k / n) for k in counts)


def constant_prediction(run: RunResult) -> Finding | None:
    """``constant-prediction``: at the end of the run the model predicted one class for
    every row of its last training batches (argmax of the logits, the probe's
    ``recent_predicted``), while those rows' labels hold several classes (the others at
    least :data:`CONSTANT_MIN_OTHERS` of :data:`CONSTANT_MIN_ROWS` rows or more), and the
    loss of the last steps is no better than predicting the label frequencies
    (>= ``STALL_RATIO`` x their entropy): the model learned how often each class occurs,
    nothing from the inputs (labels not aligned with the inputs, a heavy class imbalance).

    Never for a run shorter than :data:`CONSTANT_MIN_STEPS` (a healthy model predicts the
    majority class while it learns the frequencies first), one whose loss over the last
    half of the steps still falls significantly (95 % interval of the slope, as the stall
    rule), nor one reported as learning slowly (a loss still at chance is what a slow
    start looks like; that finding already says so). ``None`` when the facts are missing
    (Keras: no logits are seen)."""
    facts = run.probe.facts
    preds, labels = facts.get("recent_predicted"), facts.get("recent_labels")
    if not isinstance(preds, list) or not isinstance(labels, list) \
            or len(preds) != len(labels) or len(labels) < CONSTANT_MIN_ROWS:
        return None
    losses = [s.loss for s in run.probe.steps if s.loss is not None and math.isfinite(s.loss)]
    if len(losses) < CONSTANT_MIN_STEPS \
            or any(f.kind == SLOW_TRIAL for f in run.probe.findings):
        return None
    trend = fit(losses[-(len(losses) // 2):])
    if trend is not None and trend.slope + trend.half < 0:
        return None  # the loss still falls significantly: the model is leaving the prior
    if len(set(preds)) != 1:
        return None
    predicted = preds[0]
    others = sum(1 for y in labels if y != predicted)
    if others < CONSTANT_MIN_OTHERS * len(labels):
        return None
    prior = label_entropy(labels)
    recent = sum(losses[-WINDOW:]) / len(losses[-WINDOW:])
    if recent < STALL_RATIO * prior:
        return None
    shares = ", ".join(f"{c}: {labels.count(c)}" for c in sorted(set(labels)))
    return Finding(CONSTANT_PREDICTION.id, len(run.probe.steps),
                   f"the model predicts class {predicted} for every one of the last "
                   f"{len(labels)} training rows while their labels hold several classes "
                   f"({shares}); the loss of the last {WINDOW} steps, {recent:.3f}, is no "
                   f"better than predicting those class frequencies ({prior:.3f}): it learned "
                   "how often each class occurs, nothing from the inputs. Check that the "
                   "labels are aligned with the inputs (not shuffled or sorted separately), "
                   "the class balance (class weights, resampling) and the learning rate")


def _constant_prediction(run: RunResult) -> list[Finding]:
    found = constant_prediction(run)
    return [found] if found is not None else []


def _float16_weights(run: RunResult) -> list[Finding]:
    """``float16-weights``: the model's parameters are float16 (the run's ``param_dtype``)
    and it took optimizer steps."""
    if run.probe.facts.get("param_dtype") != "torch.float16" or not run.probe.steps:
        return []
    return [Finding(FLOAT16_WEIGHTS.id, 0,
                    "the model's weights are float16 and are trained directly: updates under "
                    "float16 resolution vanish and the loss overflows easily (load in float32 "
                    "and use mixed precision, fp16=True / torch.autocast)")]


LEARNING_SLOWLY = Category(
    id=SLOW_TRIAL,
    title="the loss falls, but too slowly to get clearly under the chance level within the "
          "budget, with no known cause of a stall",
    hint="train longer, or raise the learning rate if it should learn faster (a run "
         "finding: the child's final verdict, or a flat stall with no known cause)",
    no_recipe="a loss that falls slowly may be the script's own pace: advice only",
    kind=Kind.FINDING,
    symptom_finding=unexplained_flat,
    advisory=True,
)
CONSTANT_PREDICTION = Category(
    id="constant-prediction",
    title="the model predicts one class for every row while the labels hold several: it "
          "learned the class frequencies, nothing from the inputs",
    hint="check that the labels are aligned with the inputs, the class balance and the "
         "learning rate (a run finding: the probe reads the last batches' predictions)",
    no_recipe="why the inputs teach nothing (labels shuffled apart, an imbalance, the "
              "learning rate) is not read from the run: the finding names the evidence",
    kind=Kind.FINDING,
    findings=_constant_prediction,
)
FLOAT16_WEIGHTS = Category(
    id="float16-weights",
    title="float16 weights trained directly: updates under float16 resolution vanish and the "
          "loss overflows easily",
    hint="load the model in float32 and train with mixed precision (fp16=True / "
         "torch.autocast)",
    no_recipe="how the model is loaded and cast is the script's choice: advice only",
    kind=Kind.FINDING,
    findings=_float16_weights,
)
#: What the losses and outputs of a run that trained show without a fault, in the order
#: they are reported (after the step evidence's findings).
FINDINGS: tuple[Category, ...] = (LEARNING_SLOWLY, CONSTANT_PREDICTION, FLOAT16_WEIGHTS)
