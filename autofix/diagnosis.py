"""Sorts a failed run into a fault category (:mod:`autofix.categories`)."""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path

from autofix.advice import advice_for
from autofix.categories import (
    TIMEOUT,
    UNKNOWN,
    Category,
    all_categories,
    all_frames,
    frame_keys,
    get_category,
    inner_message,
    is_category,
    raised_site,
)
from autofix.child.symptoms import FLAT_EVIDENCE, STALL_RATIO, WINDOW, LossMonitor, fit
from autofix.registry import plugins
from autofix.traceback_text import parse_traceback
from autofix.types import (
    Diagnosis,
    ExceptionInfo,
    Finding,
    Frame,
    Healthy,
    PreflightFault,
    RunOutcome,
    RunResult,
    SampleLoss,
    SymptomReport,
)

_STDIN_HINT = (
    "the script reads standard input, which autofix closes; pass values as arguments "
    "(autofix SCRIPT -- ARGS) or environment variables"
)


#: Categories whose message alone is too common: they match only when, for each regex
#: here, some frame of the exception (``file: line text``) matches it (where it was raised).
FRAME_GUARDS: dict[str, tuple[re.Pattern[str], ...]] = {
    # a KeyError raised by pandas while the DataLoader fetches rows of the "dataset"
    "dataframe-to-trainer": (re.compile(r"[/\\]pandas[/\\]"), re.compile(r"fetch\.py: ")),
    # shape errors only where the embeddings add position / token-type vectors
    "longer-than-positions": (re.compile(r"modeling_\w+\.py: .*(position|token_type)"),),
}
#: Wrappers that hide the model's forward signature from Trainer.
_WRAPPERS = ("DataParallel", "DistributedDataParallel")


def _guarded(category: Category, exc: ExceptionInfo) -> bool:
    """``exc`` passes ``category``'s frame guards (:data:`FRAME_GUARDS`; none: True)."""
    places = [f"{f.file}: {f.text}" for f in exc.frames]
    return all(any(g.search(p) for p in places) for g in FRAME_GUARDS.get(category.id, ()))


def classify(exc: ExceptionInfo) -> Category:
    """The first category whose patterns match ``exc`` or an exception it was chained from.

    The exception itself is tried against every category before its chain, so a wrapper's
    own message wins over its cause's, unless a category matching anywhere in the chain
    ``overrides`` it (``too many dimensions 'str'`` under "Unable to create tensor" is
    ``string-labels``, not ``ragged-batch``). Where the error was raised is part of the
    match (:func:`autofix.categories.raised_site`): "Unable to create tensor" from a
    collator is ``ragged-batch``, from a ``Dataset.map`` function ``map-return-tensors``.
    Returns :data:`UNKNOWN` when nothing matches.
    """
    chain = (exc, *exc.chain)
    categories = tuple({c.id: c for c in (*all_categories(),
                                          *plugins().categories())}.values())
    site = raised_site(exc)
    frames = tuple(key for candidate in chain for key in frame_keys(all_frames(candidate)))

    def matches(category: Category, candidate: ExceptionInfo) -> bool:
        return category.matches(candidate.short_type, candidate.message, site, frames) \
            and _guarded(category, candidate)

    found = next((category for candidate in chain for category in categories
                  if matches(category, candidate)), UNKNOWN)
    for category in categories:
        if found.id in category.overrides and any(matches(category, c) for c in chain):
            return category
    return found


def user_frame(exc: ExceptionInfo, script: Path) -> Frame | None:
    """The innermost frame inside the user's script, or ``None`` when it never appears."""
    target = str(script)
    for frame in reversed(exc.frames):
        if frame.file == target:
            return frame
    for inner in exc.chain:
        found = user_frame(inner, script)
        if found is not None:
            return found
    return None


def key_lines(exc: ExceptionInfo, script: Path, limit: int = 6) -> tuple[str, ...]:
    """The traceback lines a person reads first: the script's frames, the innermost
    library frame, then the error line."""
    lines = [
        f"{Path(f.file).name}:{f.line} in {f.function}: {f.text}".rstrip(": ")
        for f in exc.frames
        if f.file == str(script)
    ][-(limit - 2):]
    if exc.frames and exc.frames[-1].file != str(script):
        last = exc.frames[-1]
        lines.append(f"{last.file}:{last.line} in {last.function}: {last.text}".rstrip(": "))
    lines.append(exc.headline())
    return tuple(lines)


def exception_of(run: RunResult) -> ExceptionInfo | None:
    """The run's exception: the probe's report, else parsed from the output tail."""
    return run.probe.exception or parse_traceback(run.output_tail)


def diagnose(run: RunResult, script: Path) -> Diagnosis:
    """Diagnose a run that did not succeed.

    ``script`` is the absolute path the child ran as (frames are matched against it).
    A timeout gives ``timeout``; an exception its category; anything else ``unknown``
    with the last output line as evidence. Never raises for odd output.
    """
    if run.outcome is RunOutcome.TIMEOUT:
        return Diagnosis(
            category=TIMEOUT.id,
            evidence=f"killed after {run.seconds:.0f} s; last output: {run.last_line[:200]}",
            hint=TIMEOUT.hint,
        )
    exc = exception_of(run)
    if exc is None:
        return Diagnosis(
            category=UNKNOWN.id,
            evidence=f"exit code {run.returncode}; last output: {run.last_line[:200]}",
            hint=UNKNOWN.hint,
        )
    matched = classify(exc)
    category = matched
    seen = [d for t in run.probe.trainers for d in t.datasets] + run.probe.datasets
    if category.id == "ragged-batch" and any(d.label_kind == "str" for d in seen):
        category = get_category("string-labels")  # same message: the labels decide
    if category.id == "raw-dataset" and any(t.model_class in _WRAPPERS
                                            for t in run.probe.trainers):
        category = get_category("model-wrapped-dataparallel")  # the wrapper hid the columns
    frame = user_frame(exc, script)
    evidence = exc.headline()
    quoted = matched.matching_line(exc.message)  # the line of the message that matched
    inner = inner_message(exc.message)  # TF graph mode: the real error inside the message
    if quoted and quoted not in evidence:
        evidence = f"{exc.short_type}: {quoted}"
    elif inner and not quoted:
        evidence = inner if re.match(r"\w+(Error|Exception):", inner) \
            else f"{exc.short_type}: {inner}"
    hint = category.hint
    if exc.short_type == "EOFError" and any(f.function == "<module>" or "input" in f.text
                                            for f in exc.frames):
        hint = _STDIN_HINT
    diagnosis = Diagnosis(
        category=category.id,
        evidence=evidence[:300],
        file=str(script) if frame else "",
        line=frame.line if frame else 0,
        line_text=frame.text if frame else "",
        details=key_lines(exc, script),
        hint=hint,
        error_type=exc.short_type,
    )
    advice = advice_for(diagnosis, run.probe)  # the probe's facts say what to change
    return dataclasses.replace(diagnosis, hint=advice) if advice else diagnosis


def diagnose_symptom(run: RunResult) -> Diagnosis | None:
    """Name the root cause of the symptom the probe confirmed (``None``: no symptom).

    ``nan-loss``: like the course, look at the first bad batch's per-sample losses against
    its labels and ``num_labels``; labels outside the head mean ``label-out-of-range``.
    ``stalled-loss``: the causes autofix can fix, found in the run's facts: a string Keras
    loss on a Hugging Face model (``keras-string-loss``) and a learning rate at or above
    1e-3 (``lr-too-high``); all found causes are listed in ``causes``.
    """
    symptom = run.probe.symptom
    if symptom is None:
        return None
    if symptom.kind == "nan-loss":
        return _nan_diagnosis(symptom, run.probe.facts.get("param_dtype") == "torch.float16")
    stalled = get_category("stalled-loss")
    causes = [rule.category for rule in stalled.root_causes if rule.found(run.probe)]
    rates = [s.lr for s in run.probe.steps if s.lr is not None]
    advice = stall_advice(run)
    found = f"; root causes: {', '.join(causes)}" if causes else \
        (f"; root cause: {advice[0]}" if advice else "; no known root cause")
    return Diagnosis(
        category=causes[0] if causes else "stalled-loss",
        evidence=symptom.evidence + found,
        details=(symptom.evidence, f"learning rate: {max(rates):g}" if rates else "lr unknown",
                 *advice),
        via="stalled-loss" if causes else "",
        causes=tuple(causes),
        hint=" ".join(advice) if advice and not causes else stalled.hint,
    )


def judge(run: RunResult, script: Path) -> Healthy | Diagnosis:
    """The verdict on one run: :class:`Healthy` when it ended cleanly (exit 0 or the step
    budget) with no symptom and only finite losses, else its :class:`Diagnosis`.

    ``Healthy.proven`` says whether the loss got clearly under the chance level within
    the budget (:meth:`LossMonitor.clearly_learning`): the proof a symptom fix owes.
    """
    finite = all(s.loss is None or math.isfinite(s.loss) for s in run.probe.steps)
    clean_end = run.outcome in (RunOutcome.OK, RunOutcome.BUDGET) and run.probe.exception is None
    if clean_end and run.probe.faults and run.probe.symptom is None:
        return fault_diagnosis(run.probe.faults[0])
    if clean_end and finite and unexplained_flat(run) is not None:
        return Healthy(healthy_evidence(run), False)  # learning slowly (findings_of)
    if run.outcome in (RunOutcome.OK, RunOutcome.BUDGET) and run.probe.symptom is None \
            and finite:
        losses = [s.loss for s in run.probe.steps if s.loss is not None]
        proven = LossMonitor(run.probe.num_classes, losses).clearly_learning()
        return Healthy(healthy_evidence(run), proven)
    return diagnose_symptom(run) or diagnose(run, script)


#: ``via`` of a diagnosis made from a healthy run that was not clearly learning (the
#: ``learning-slowly`` finding): its fix is a trial, kept only when the next run proves it.
SLOW_TRIAL = "learning-slowly"
#: ``via`` of a fault found by a preflight check that raises nothing (a loss on logits).
PREFLIGHT_FAULT = "preflight"


def slow_at_high_lr(run: RunResult) -> Diagnosis | None:
    """``lr-too-high`` for a healthy run that ended with the finding ``learning-slowly``
    (not clearly under chance, no stall proven) at a learning rate of 1e-3 or more (the
    stall's ``lr-too-high`` root-cause rule), else ``None``.

    Not a verdict on its own: Adam at 1e-3 on MiniLM may stall flat at ln C, or learn and
    come back up to chance within one run (the course's TF script, 75 steps, three
    unseeded runs measured 2026-12-01: flat at 1.099 twice, once down to 0.97 and back to
    1.11, which the stall rule calls "learning slowly"). So the fix it leads to is a trial
    (``via`` :data:`SLOW_TRIAL`): the next run must show the loss clearly under chance, or
    the fix is dropped and the session ends as it stood.
    """
    slow = next((f for f in run.probe.findings if f.kind == "learning-slowly"), None)
    too_high = next(r for r in get_category("stalled-loss").root_causes
                    if r.category == "lr-too-high")  # the stall's own lr rule, not a twin
    if slow is None or not too_high.found(run.probe):
        return None
    rates = [s.lr for s in run.probe.steps if s.lr is not None]
    return Diagnosis(
        category="lr-too-high",
        evidence=f"not clearly learning at a learning rate of {max(rates):g}: {slow.evidence}",
        details=(slow.evidence, f"learning rate: {max(rates):g}",
                 "a trial: the lower learning rate is kept only if the next run's loss gets "
                 "clearly under chance"),
        via=SLOW_TRIAL,
        causes=("lr-too-high",),
        hint="a learning rate of 1e-3 or more is far above what fine-tuning a pretrained "
             "transformer uses (the course: 2e-5 to 5e-5)",
    )


def unexplained_flat(run: RunResult) -> Finding | None:
    """The finding ``learning-slowly`` for a flat-loss stall verdict (the child's
    :meth:`LossMonitor.flat`: near chance, no significant fall) that has no known cause in
    the run's facts, else ``None``. A stall autofix can neither explain nor fix is not
    called a failure: no lr of 1e-3 or more, no lr of 0 or still warming up, no frozen
    base, no loss on logits. Measured on the false-alarm grid (2026-12-01): MiniLM at lr
    1e-5, batch 32, 2 classes, a hand loop of 75 steps falls 0.697 -> 0.686 with little
    noise; the flat rule called that a stall, and it was a slow, healthy run."""
    symptom = run.probe.symptom
    if symptom is None or symptom.kind != "stalled-loss" \
            or not symptom.evidence.startswith(FLAT_EVIDENCE):
        return None
    stalled = get_category("stalled-loss")
    if any(rule.found(run.probe) for rule in stalled.root_causes) or stall_advice(run) \
            or run.probe.faults:
        return None
    rates = [s.lr for s in run.probe.steps if s.lr is not None]
    lr = f"a learning rate of {max(rates):g}" if rates else "an unknown learning rate"
    return Finding("learning-slowly", symptom.step,
                   f"learning slowly: {symptom.evidence[len(FLAT_EVIDENCE):]}; no known cause "
                   f"of a stall ({lr}, trainable weights, a loss that fits the outputs), so "
                   "this is a finding, not a failure: train longer or raise the learning rate "
                   "if it should learn faster")


def fault_diagnosis(fault: PreflightFault) -> Diagnosis:
    """The diagnosis of a fault a preflight check found before training (a Keras loss
    that reads probabilities on a model returning logits): its category, the check's
    evidence line, and the category's hint."""
    hint = get_category(fault.category).hint if is_category(fault.category) else ""
    return Diagnosis(
        category=fault.category, evidence=fault.evidence,
        details=(fault.evidence, f"found by the preflight check '{fault.check}' before the "
                                 "first training step"),
        via=PREFLIGHT_FAULT,
        hint=hint)


def healthy_evidence(run: RunResult) -> str:
    """What a run without a fault showed: its step count and losses (and the budget
    extension an unclear verdict used), else its last line."""
    losses = [s.loss for s in run.probe.steps if s.loss is not None]
    if not losses:
        return run.last_line[:200]
    tail = losses[-WINDOW:]
    extended = f" (budget extended to {run.probe.extended_to} steps: the verdict was " \
        "unclear at the step budget)" if run.probe.extended_to else ""
    slow = next((f"; {f.evidence}" for f in run.probe.findings
                 if f.kind == "learning-slowly"), "")
    return (f"{len(run.probe.steps)} steps, loss {losses[0]:.3f} at step 1, "
            f"{sum(tail) / len(tail):.3f} over the last {len(tail)} steps{extended}{slow}")


def proof_failure(run: RunResult) -> str:
    """Why a healthy run does not prove a symptom fix ("" when it does)."""
    monitor = LossMonitor(run.probe.num_classes,
                          [s.loss for s in run.probe.steps if s.loss is not None])
    if monitor.clearly_learning():
        return ""
    return (f"the loss did not get clearly under the chance level within the budget (last "
            f"{WINDOW} steps: {monitor.window_mean():.3f}, {len(monitor.losses)} steps)")


#: Under this fraction of trainable parameters the base model counts as frozen (a
#: MiniLM-L6 classification head is 0.5 % of its 22.7 M parameters).
FROZEN_FRACTION = 0.05


def stall_advice(run: RunResult) -> list[str]:
    """Root causes of a stall that autofix reports with advice (no recipe is sure), found
    in the run's facts: a learning rate of 0 (a schedule that ends before the budget), a
    learning rate still rising (warmup longer than the budget), a frozen base model."""
    out = []
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


def findings_of(run: RunResult) -> list[Finding]:
    """What a run that raised nothing and stalled nowhere still got wrong (issue 8,
    "trains, but wrongly"): class ids regressed by a 1-output head, a hand loop whose
    optimizer never steps (or never zeroes its gradients), one class predicted for every
    row (:func:`constant_prediction`), float16 weights trained directly.
    Reported, never a failure. A flat loss with no known cause comes first
    (:func:`unexplained_flat`)."""
    flat = unexplained_flat(run)
    out = [flat] if flat is not None else []
    for trainer in run.probe.trainers:
        train = next((d for d in trainer.datasets if d.role == "train"), None)
        if trainer.num_labels == 1 and train is not None and train.label_kind == "int" \
                and (train.label_classes or 0) + (train.label_max or 0) >= 1:
            out.append(Finding("regression-on-class-ids", 0,
                               f"the model has num_labels=1, so Trainer fits a regression (MSE) "
                               f"to the integer class ids of column '{train.label_column}' "
                               f"(up to {train.label_max or train.label_classes}); for "
                               "classification set num_labels to the number of classes"))
    facts = run.probe.facts
    steps, backward = facts.get("optimizer_steps", 0), facts.get("backward_calls", 0)
    if isinstance(backward, int) and backward >= 2 and steps == 0:
        out.append(Finding("optimizer-never-steps", 0,
                           f"loss.backward() ran {backward} times but optimizer.step() never "
                           "did: the model never changes (a missing optimizer.step(), or a "
                           "gradient accumulation that does not step within the run)"))
    if isinstance(steps, int) and steps >= 2 and backward and facts.get("zero_grad_calls") == 0:
        out.append(Finding("zero-grad-missing", 0,
                           f"{steps} optimizer steps and no zero_grad(): gradients add up "
                           "from step to step (call optimizer.zero_grad() after each step)"))
    constant = constant_prediction(run)
    if constant is not None:
        out.append(constant)
    if facts.get("param_dtype") == "torch.float16" and run.probe.steps:
        out.append(Finding("float16-weights", 0,
                           "the model's weights are float16 and are trained directly: "
                           "updates under float16 resolution vanish and the loss overflows "
                           "easily (load in float32 and use mixed precision, fp16=True / "
                           "torch.autocast)"))
    return out


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
            or any(f.kind == "learning-slowly" for f in run.probe.findings):
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
    return Finding("constant-prediction", len(run.probe.steps),
                   f"the model predicts class {predicted} for every one of the last "
                   f"{len(labels)} training rows while their labels hold several classes "
                   f"({shares}); the loss of the last {WINDOW} steps, {recent:.3f}, is no "
                   f"better than predicting those class frequencies ({prior:.3f}): it learned "
                   "how often each class occurs, nothing from the inputs. Check that the "
                   "labels are aligned with the inputs (not shuffled or sorted separately), "
                   "the class balance (class weights, resampling) and the learning rate")


def _nan_diagnosis(symptom: SymptomReport, float16: bool = False) -> Diagnosis:
    samples, head = symptom.samples, symptom.num_labels
    outside = [s for s in samples if head is not None and (s.label >= head or -100 < s.label < 0)]
    if outside:
        labels = sorted({s.label for s in outside})
        return Diagnosis(
            category="label-out-of-range", via="nan-loss",
            evidence=f"{symptom.evidence}; labels {labels} of samples "
                     f"{[s.index for s in outside]} are outside num_labels={head}",
            details=tuple(_sample_lines(samples)),
        )
    parts = [symptom.evidence]
    ignored = [s for s in samples if s.label == -100]
    bad = [s for s in samples if s.loss is not None and not math.isfinite(s.loss)]
    if samples and len(ignored) == len(samples):
        parts.append(f"all {len(samples)} labels of that batch are -100 (ignored), so the mean "
                     "loss is taken over zero targets")
    elif bad:
        parts.append(f"non-finite per-sample losses at samples {[s.index for s in bad]} "
                     f"(labels {[s.label for s in bad]})")
    elif float16:
        parts.append("face: float16 weights trained directly (the model's parameters are "
                     "torch.float16): overflow or an update under float16 resolution; load "
                     "the model in float32 and train with mixed precision (fp16=True / "
                     "torch.autocast) instead")
    elif samples:
        parts.append("every per-sample loss of that batch is finite; the NaN comes from "
                     "elsewhere (fp16 overflow, a learning rate far too high, log(0))")
    return Diagnosis(category="nan-loss", evidence="; ".join(parts),
                     details=tuple(_sample_lines(samples)), hint=get_category("nan-loss").hint)


def _sample_lines(samples: tuple[SampleLoss, ...], limit: int = 8) -> list[str]:
    lines = [f"batch sample {s.index}: label {s.label}, loss "
             f"{'n/a' if s.loss is None else format(s.loss, '.4g')}" for s in samples[:limit]]
    if len(samples) > limit:
        lines.append(f"... {len(samples) - limit} more samples")
    return lines
