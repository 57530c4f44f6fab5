"""Stall verdicts from execution evidence read around the optimizer step (standard library).

The loss-curve rule (:mod:`symptoms`) can only call a stall late: healthy fine-tuning sits
at the chance level for 60-80 steps, so a flat loss is judged at the end of the extended
budget (step 120). What happens at ``optimizer.step()`` says more, and sooner (the idea of
TrainCheck, OSDI '25: silent training errors flagged from execution evidence within an
iteration of their trigger). The probe (:mod:`step_probe`) reads, at each step of a
Trainer, a hand loop or Keras ``fit``, a small sample of the trained model's trainable
parameters (:data:`SAMPLE_PARAMS` tensors, about 256 values each) before and after the step,
whether their gradients are missing or zero at the step (PyTorch), the learning rate of
every parameter group, how many of the model's trainable parameters the optimizer holds,
and the update-to-weight ratio of weight matrices. :class:`EvidenceMonitor` keeps one
:class:`StepEvidence` per step and :meth:`EvidenceMonitor.judge` turns them into a verdict
at its cause (:data:`CAUSES`), the step in the evidence:

* ``lr-zero`` / ``scheduler-not-stepped``: the learning rate of every group was 0 and the
  sampled parameters did not change over :data:`WINDOW` steps in a row (a warmup schedule
  stepped once per epoch stays at 0 for the whole first epoch: the second when the
  optimizer's scheduler was not stepped during those steps). One step at lr 0 is normal
  (a linear warmup's first step), ten are not. Judged from step :data:`WINDOW` on.
* ``no-gradients`` / ``zero-grad-before-step``: every sampled trainable parameter had no
  gradient (``None``) or an all-zero one at every step of the window (the second when a
  ``backward()`` and a ``zero_grad()`` both ran between the steps: the gradients were
  cleared after backward, before the step). Adam's moments stay 0: nothing moves but
  weight decay.
* ``other-parameters``: none of the model's trainable parameters is in the optimizer's
  parameter groups, the sampled ones did not change over the window and the parameters
  the optimizer does hold have no gradients (an optimizer built over another model's
  parameters, or before the model was replaced; a student trained beside a teacher has
  gradients).
* ``frozen-base``: under :data:`FROZEN_FRACTION` of a pretrained model's parameters are
  trainable (no PEFT adapter), and from step 30 (:data:`symptoms.MIN_STEPS`) the loss is at
  chance and flat by the loss rule (:meth:`LossMonitor.flat`): only the new head learns,
  too slowly to show. A head that learns slowly on a frozen encoder (feature extraction)
  is no stall.
* ``lr-too-high``: an Adam-like optimizer moves a pretrained model's weight matrices (no
  PEFT adapter) by a median update-to-weight ratio of :data:`RATIO_HIGH` or more over a
  window of the run (the first, unless a warmup delays it), and from step 30 the loss is
  not clearly under chance (:meth:`LossMonitor.clearly_learning`). Adam's first steps move
  each weight by about the learning rate whatever the gradient, so the ratio is close to
  lr / rms(w): the measurement in :data:`RATIO_HIGH` sets the threshold between fine-tuning
  rates and 1e-3.

The last two also need a loss that is not learning: neither falling significantly over the
last half of the steps nor fallen from its first window (:meth:`LossMonitor.falling`,
:meth:`LossMonitor.fell`); and a classifier's task (ln C), on which they were measured: a
language model keeps the loss rule. Both are judged at every step from 30 on, so a loss
that falls first and comes back to chance is flagged once it is back (the loss rule's
``returned`` may name it first, by its rise; at a learning rate of 1e-3 or more its cause is
``lr-too-high`` too, the parent's root-cause rule).
A run that learns at a ratio of :data:`RATIO_TRIAL` or more gets no verdict here, but its
summary says ``fast`` (:meth:`EvidenceMonitor.fast`): the parent proposes the lower rate as
a trial, kept only if the next run also learns clearly.
Without the evidence (a custom training step, TF gradients, no model seen) nothing here
judges and the loss-curve rule stays the verdict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .symptoms import CLASSES, MIN_STEPS, STALL_RATIO, ZERO_LR, LossMonitor, Symptom

#: Steps of evidence in a row a verdict needs (the loss rule's window: 10 steps).
WINDOW = 10
#: Trainable tensors sampled per step (spread over the parameter list: embeddings,
#: encoder layers, head), about 256 values each (a strided slice), so the check costs a
#: few small copies per step whatever the model's size.
SAMPLE_PARAMS = 8
SAMPLE_VALUES = 256
#: Under this fraction of trainable parameters a pretrained base counts as frozen (a
#: MiniLM-L6 classification head is 0.5 % of its 22.7 M parameters; a full fine-tune 100 %).
FROZEN_FRACTION = 0.05
#: The update-to-weight ratio (||w_after - w_before|| / ||w_before|| over the sampled values
#: of each weight matrix, median over the matrices, then over :data:`WINDOW` steps; the
#: highest such window of the run, :meth:`EvidenceMonitor.ratio`) at or above which an
#: Adam-like optimizer moves a pretrained model faster than fine-tuning does. Adam's first
#: steps move each weight by about the learning rate whatever the gradient, so the ratio of
#: the first window is close to lr / rms(w); later, once the loss sits at chance, the
#: gradients are noise and Adam's steps shrink (at lr 1e-3 from 1.7e-2 at step 1 to 1.2e-3
#: over steps 20-29, no longer apart from 5e-5's 3.4e-4), so the highest window counts.
#: Measured with this probe (``benchmarks/bench_stall_grid.py --subset ratio``: MiniLM-L6,
#: 4 classes, batch 16, steps 1-10): AdamW at 1e-5 7.4e-5, at 5e-5 (the grid's highest
#: healthy rate) 3.6e-4, at 1e-3 7.3e-3 (a hand loop; Trainer and Keras ``"adam"`` in
#: docs/benchmarks.md). The ratio scales with the rate (about 7 x lr on MiniLM), so the
#: threshold is 5.5 x the healthy ceiling (a rate of about 3e-4) and 3.6 x under 1e-3.
RATIO_HIGH = 2e-3
#: The ratio at or above which a classifier run that learns anyway is still reported as
#: moving a pretrained model too fast (the summary's ``fast``: the parent's ``lr-too-high``
#: trial, which also needs a learning rate of 1e-3 or more): twice :data:`RATIO_HIGH`, a
#: learning rate of about 6e-4 on MiniLM-L6; 9x the healthy ceiling (4.3e-4) and 1.6x under
#: the lowest ratio measured at 1e-3 (6.5e-3, Keras ``"adam"``; Trainer 6.7e-3, hand loop
#: 7.3e-3, Keras up to 8.4e-3). At such a rate the same script learns in some runs and
#: stalls at chance in others (``benchmarks/bench_keras_adam.py``).
RATIO_TRIAL = 2 * RATIO_HIGH
#: A learning rate at or above which a frozen base with a training head is a linear probe
#: (feature extraction) at a probe's rate, not a fault: a fresh head on a frozen encoder is
#: trained at 1e-4 to 1e-3 (a full fine-tune at 1e-5 to 5e-5, the grid's healthy rates), and
#: at such a rate it learns slowly by design (MiniLM-L6, lr 1e-3, a 3-class head: 1.110 ->
#: 1.081 over 30 steps, validation accuracy 0.52 -> 0.65 over 69). The frozen-base verdict
#: needs every step of its window under this rate; above it the run keeps the loss rule (a
#: ``learning-slowly`` finding, advisory). 4x the highest fine-tuning rate measured healthy.
PROBE_LR = 2e-4

#: The causes a verdict names (``StepVerdict.cause``).
LR_ZERO = "lr-zero"
SCHEDULER_NOT_STEPPED = "scheduler-not-stepped"
NO_GRADIENTS = "no-gradients"
ZERO_GRAD_BEFORE_STEP = "zero-grad-before-step"
OTHER_PARAMETERS = "other-parameters"
FROZEN_BASE = "frozen-base"
LR_TOO_HIGH = "lr-too-high"
CAUSES = (LR_ZERO, SCHEDULER_NOT_STEPPED, NO_GRADIENTS, ZERO_GRAD_BEFORE_STEP,
          OTHER_PARAMETERS, FROZEN_BASE, LR_TOO_HIGH)

#: ``StepEvidence.grads`` values.
GRADS_SOME = "some"  # at least one sampled gradient has a non-zero value
GRADS_ZERO = "zero"  # every sampled gradient is present and all zero
GRADS_NONE = "none"  # no sampled parameter has a gradient at the step
GRADS_UNKNOWN = ""  # not read (Keras)


@dataclass(frozen=True)
class StepEvidence:
    """What one optimizer step showed.

    ``step``: the optimizer step (1-based); ``sampled``: trainable tensors read;
    ``changed``: whether any sampled value changed (``None``: not read); ``grads``: one of
    :data:`GRADS_SOME`, :data:`GRADS_ZERO`, :data:`GRADS_NONE`, :data:`GRADS_UNKNOWN`;
    ``lr``: the largest learning rate over the parameter groups (``None``: unknown);
    ``ratio``: the median update-to-weight ratio of the sampled weight matrices (``None``:
    none sampled); ``in_optimizer``: how many of the model's trainable tensors the optimizer
    holds (``None``: no model seen); ``backward``/``zero_grad``: whether a scalar
    ``backward()`` / a ``zero_grad()`` ran since the previous step (hand loops);
    ``scheduler_steps``: the ``last_epoch`` of this optimizer's lr scheduler (``None``: no
    scheduler), which each ``scheduler.step()`` raises by one."""

    step: int
    sampled: int = 0
    changed: bool | None = None
    grads: str = GRADS_UNKNOWN
    lr: float | None = None
    ratio: float | None = None
    in_optimizer: int | None = None
    backward: bool = False
    zero_grad: bool = False
    scheduler_steps: int | None = None


@dataclass(frozen=True)
class ModelFacts:
    """The trained model as the probe saw it: ``trainable``/``total`` parameter counts
    (elements), ``pretrained`` (loaded with ``from_pretrained``: a ``name_or_path``),
    ``adapter`` (a PEFT adapter is trained), ``adam`` (the optimizer is Adam-like),
    ``optimizer`` (its class name)."""

    trainable: int = 0
    total: int = 0
    pretrained: bool = False
    adapter: bool = False
    adam: bool = False
    optimizer: str = ""

    @property
    def frozen(self) -> bool:
        """A base with under :data:`FROZEN_FRACTION` of its parameters trainable."""
        return self.total > 0 and 0 < self.trainable < FROZEN_FRACTION * self.total

    @property
    def fine_tuned(self) -> bool:
        """A pretrained model trained in full or in part, without a PEFT adapter: the case
        the frozen-base and update-ratio thresholds were measured on."""
        return self.pretrained and not self.adapter


@dataclass(frozen=True)
class StepVerdict:
    """A verdict from the evidence: the loss rule's :class:`Symptom` (``stalled-loss``,
    the step, the evidence line) and its ``cause`` (:data:`CAUSES`)."""

    symptom: Symptom
    cause: str


def median(values: list[float]) -> float:
    """The median of ``values`` (NaN for none)."""
    ordered = sorted(values)
    n = len(ordered)
    if not n:
        return math.nan
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


def update_ratio(before: list[float], after: list[float]) -> float | None:
    """||after - before|| / ||before|| over the same sampled values (``None`` when the
    weights are all 0: a zero-initialised matrix, a LoRA B, has no ratio)."""
    norm = math.sqrt(sum(b * b for b in before))
    if not norm or len(before) != len(after):
        return None
    return math.sqrt(sum((a - b) ** 2 for a, b in zip(after, before, strict=True))) / norm


@dataclass
class EvidenceMonitor:
    """The evidence of each optimizer step (:meth:`add`) and the verdict it supports
    (:meth:`judge`). ``model`` holds the latest :class:`ModelFacts`."""

    records: list[StepEvidence] = field(default_factory=list)
    model: ModelFacts = ModelFacts()
    peak: float | None = None  # the highest window ratio so far (:meth:`ratio`)
    peak_span: str = ""

    def add(self, record: StepEvidence) -> None:
        """Keep one step's evidence."""
        self.records.append(record)
        tail = self.window()
        ratios = [r.ratio for r in tail if r.ratio is not None]
        if len(tail) == WINDOW and ratios and (self.peak is None or median(ratios) > self.peak):
            self.peak, self.peak_span = median(ratios), self._span()

    def window(self) -> list[StepEvidence]:
        """The last :data:`WINDOW` records (fewer while the run is younger)."""
        return self.records[-WINDOW:]

    def ratio(self) -> float | None:
        """The highest median update-to-weight ratio of a :data:`WINDOW`-step window so far
        (``None``: no full window measured)."""
        return self.peak

    def _span(self) -> str:
        tail = self.window()
        return f"optimizer steps {tail[0].step}-{tail[-1].step}"

    def judge(self, losses: LossMonitor) -> StepVerdict | None:
        """The verdict the evidence supports now, else ``None`` (judged again at the next
        step; the loss rule stays the fallback). ``losses`` is the run's loss monitor: the
        frozen-base and update-ratio verdicts also need its chance level and loss."""
        tail = self.window()
        if len(tail) < WINDOW:
            return None
        step = max(len(losses.losses), tail[-1].step)
        read = all(r.sampled and r.changed is not None for r in tail)
        unchanged = read and not any(r.changed for r in tail)
        if unchanged and all(r.lr is not None and r.lr <= ZERO_LR for r in tail):
            schedule = [r.scheduler_steps for r in tail]
            if schedule[0] is not None and schedule[-1] == schedule[0]:
                return self._verdict(step, SCHEDULER_NOT_STEPPED,
                                     f"the learning rate is 0 at every one of {self._span()} "
                                     f"and the sampled weights did not change; the optimizer's "
                                     f"lr scheduler was not stepped during them (its "
                                     f"last_epoch stayed at {schedule[-1]}): its schedule "
                                     "counts optimizer steps but is stepped less often (once "
                                     "per epoch)")
            return self._verdict(step, LR_ZERO,
                                 f"the learning rate is 0 at every one of {self._span()} and "
                                 "the sampled weights did not change")
        no_grads = all(r.sampled and r.grads in (GRADS_NONE, GRADS_ZERO) for r in tail)
        if unchanged and no_grads and all(r.in_optimizer == 0 for r in tail):
            return self._verdict(step, OTHER_PARAMETERS,
                                 f"none of the model's trainable parameters is in the "
                                 f"optimizer's parameter groups, the sampled weights did not "
                                 f"change over {self._span()} and the parameters the optimizer "
                                 "holds have no gradients: the optimizer steps other "
                                 "parameters (another model's, or the model's before it was "
                                 "replaced)")
        if no_grads:
            what = "missing (None)" if all(r.grads == GRADS_NONE for r in tail) else \
                "missing or all zero"
            if all(r.backward and r.zero_grad for r in tail):
                return self._verdict(step, ZERO_GRAD_BEFORE_STEP,
                                     f"the gradients of the sampled trainable parameters are "
                                     f"{what} at every one of {self._span()}, though "
                                     "loss.backward() ran before each; zero_grad() also ran "
                                     "between the steps, so it clears the gradients after "
                                     "backward() and before step()")
            return self._verdict(step, NO_GRADIENTS,
                                 f"the gradients of the sampled trainable parameters are "
                                 f"{what} at every one of {self._span()}: no gradient "
                                 "reaches the weights the optimizer steps")
        return self._loss_evidence(losses, step)

    def _loss_evidence(self, losses: LossMonitor, step: int) -> StepVerdict | None:
        """The frozen-base and update-ratio verdicts: evidence at the step plus a loss that
        is not learning at step :data:`symptoms.MIN_STEPS` or later."""
        if losses.level is None or losses.level.kind != CLASSES \
                or len(losses.losses) < MIN_STEPS or not self.model.fine_tuned:
            return None  # measured on classifiers; a language model keeps the loss rule
        if not all(math.isfinite(x) for x in losses.losses[-WINDOW:]) \
                or losses.falling() or losses.fell():
            return None  # falling (from its start, for a language model): learning
        level = (f"mean of steps {len(losses.losses) - WINDOW + 1}-{len(losses.losses)} is "
                 f"{losses.window_mean():.3f}, chance {losses.label} = {losses.chance:.3f}")
        facts = self.model
        # a frozen base is often the script's design (feature extraction: a linear probe on
        # the encoder learns slowly: measured on MiniLM-L6, lr 1e-3, a 3-class head: 1.110 ->
        # 1.081 over 30 steps, validation accuracy 0.52 -> 0.65 over 69): a verdict needs the
        # flat rule too (even the steepest slope of its interval does not reach the line)
        if facts.frozen and not self.probe_rate() \
                and losses.window_mean() >= STALL_RATIO * losses.chance \
                and losses.flat() is not None:
            return self._verdict(step, FROZEN_BASE,
                                 f"only {facts.trainable:,} of {facts.total:,} parameters "
                                 f"({100 * facts.trainable / facts.total:.1f} %) are "
                                 f"trainable (under {FROZEN_FRACTION:.0%}): the pretrained "
                                 f"base is frozen and the loss is at chance, not falling "
                                 f"({level})")
        ratio = self.ratio()
        # with the base frozen the ratio is the new head's (not pretrained: lr / rms(w) of a
        # fresh init is large whatever the rate): no evidence of a rate too high
        if facts.adam and not facts.frozen and ratio is not None and ratio >= RATIO_HIGH \
                and not losses.clearly_learning():
            return self._verdict(step, LR_TOO_HIGH,
                                 f"{facts.optimizer or 'the optimizer'} moves the pretrained "
                                 f"weight matrices by a median update-to-weight ratio of "
                                 f"{ratio:.1e} per step over {self.peak_span} (fine-tuning "
                                 f"rates stay under {RATIO_HIGH:g}), and the loss is not "
                                 f"clearly under chance ({level})")
        return None

    def probe_rate(self) -> bool:
        """Whether every step of the last window ran at a learning rate of :data:`PROBE_LR`
        or more (a linear probe's rate; ``False`` when a rate is unknown)."""
        tail = self.window()
        return bool(tail) and all(r.lr is not None and r.lr >= PROBE_LR for r in tail)

    @staticmethod
    def _verdict(step: int, cause: str, evidence: str) -> StepVerdict:
        return StepVerdict(Symptom("stalled-loss", step, f"stalled at step {step}: {evidence}"),
                           cause)

    def fast(self, losses: LossMonitor) -> bool:
        """An Adam-like optimizer moving a fine-tuned pretrained classifier (no PEFT
        adapter, its base not frozen: a fresh head's ratio is large at any rate) by a
        window ratio of :data:`RATIO_TRIAL` or more, whatever its loss."""
        ratio = self.ratio()
        return bool(self.model.adam and self.model.fine_tuned and not self.model.frozen
                    and ratio is not None and ratio >= RATIO_TRIAL and losses.level is not None
                    and losses.level.kind == CLASSES)

    def summary(self, losses: LossMonitor) -> dict[str, object]:
        """The ``step_evidence`` event's payload: what was measured (the cause is added by
        the caller when a verdict was made), and whether the updates are :meth:`fast`."""
        ratio = self.ratio()
        return {"fast": self.fast(losses), "steps": len(self.records), "ratio": ratio,
                "ratios": [r.ratio for r in self.records[:MIN_STEPS]],
                "unchanged": sum(1 for r in self.records if r.changed is False),
                "no_grads": sum(1 for r in self.records if r.grads in (GRADS_NONE, GRADS_ZERO)),
                "trainable": self.model.trainable, "total": self.model.total,
                "pretrained": self.model.pretrained, "adapter": self.model.adapter,
                "adam": self.model.adam, "optimizer": self.model.optimizer,
                "frozen": self.model.frozen}
