"""Training symptom detectors: non-finite loss and stalled loss, judged step by step.

Standard library only: this module runs inside the child (loaded by ``bootstrap.py``) and
in autofix itself (to judge whether a symptom fix proved itself).

The stall rule (``LossMonitor``), with the facts behind its constants:

* chance level: a C-class classifier that has learned nothing predicts 1/C for every
  class, so its cross-entropy is ln C (1.0986 for MNLI's 3 classes); "check your loss at
  initialisation is ln C" is standard practice (A. Karpathy, "A Recipe for Training Neural
  Networks", 2019; the HF course's chapter 8 checks the loss against it too).
* window: ``WINDOW`` = 10 consecutive optimizer steps, averaged, so one noisy batch decides
  nothing.
* when: judged from step ``MIN_STEPS`` = 40 on. Measured on this project's sample (MiniLM-L6,
  1,200-row NLI set, batch 16, lr 5e-5): healthy runs sit at ln 3 for about 15 steps (the
  new classifier head warms up) and first reach a window mean below 0.93 between steps 20
  and 35; so earlier judgements would raise false alarms.
* stalled: the window mean is at or above ``STALL_RATIO`` x ln C (0.9 x 1.0986 = 0.989),
  i.e. no better than guessing. This covers a loss that never left chance (string
  ``sparse_categorical_crossentropy`` on logits, measured flat at 1.099 from step 10).
* stopped falling: the window mean rose ``RISE_RATIO`` x ln C (0.25 x 1.0986 = 0.27) above
  the lowest window mean so far. Adam at 1e-3 on MiniLM often learns first and then comes
  back to chance (measured, 10-step means: 0.80 1.09 0.70 0.57 0.80 0.88 0.93 1.09), while
  healthy runs at 5e-5 fall steadily (1.10 1.07 0.95 0.72 0.45 0.25 0.13 0.09).
* proof that a fix worked: the last window ends ``CLEAR_RATIO`` x ln C (0.85 x 1.0986 =
  0.934) or lower, "clearly under the chance level".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

WINDOW = 10
MIN_STEPS = 40
STALL_RATIO = 0.9
RISE_RATIO = 0.25
CLEAR_RATIO = 0.85


@dataclass
class Symptom:
    """A confirmed symptom: ``kind`` is ``"nan-loss"`` or ``"stalled-loss"``."""

    kind: str
    step: int
    evidence: str


def chance_loss(num_classes: int) -> float:
    """Cross-entropy of uniform guessing over ``num_classes`` classes: ln C (nats)."""
    return math.log(num_classes)


@dataclass
class LossMonitor:
    """Feed it each optimizer step's loss; it says when a symptom is confirmed.

    ``num_classes`` is the model's ``num_labels`` (``None``: only non-finite losses are
    judged, there is no chance level to compare with).
    """

    num_classes: int | None = None
    losses: list[float] = field(default_factory=list)
    lowest: float = math.inf  # lowest window mean seen so far

    def add(self, loss: float) -> Symptom | None:
        """Record the next step's loss; returns the symptom it confirms, if any."""
        self.losses.append(loss)
        step = len(self.losses)
        if not math.isfinite(loss):
            return Symptom("nan-loss", step, f"loss is {loss} at step {step}, the first "
                                             "non-finite step")
        if self.num_classes is None or self.num_classes < 2:
            return None
        chance = chance_loss(self.num_classes)
        mean = self.window_mean()
        if step >= WINDOW:
            self.lowest = min(self.lowest, mean)
        if step < MIN_STEPS:
            return None
        where = f"mean of steps {step - WINDOW + 1}-{step} is {mean:.3f}"
        if mean >= STALL_RATIO * chance:
            first = sum(self.losses[:WINDOW]) / WINDOW
            return Symptom("stalled-loss", step,
                           f"loss stalled near chance: {where} >= {STALL_RATIO} x "
                           f"ln {self.num_classes} = {STALL_RATIO * chance:.3f} (steps "
                           f"1-{WINDOW}: {first:.3f}, lowest 10-step mean {self.lowest:.3f})")
        if mean >= self.lowest + RISE_RATIO * chance:
            return Symptom("stalled-loss", step,
                           f"loss stopped falling: {where}, up from its lowest 10-step mean "
                           f"{self.lowest:.3f} by more than {RISE_RATIO} x ln "
                           f"{self.num_classes} = {RISE_RATIO * chance:.3f}")
        return None

    def window_mean(self) -> float:
        """Mean loss of the last ``WINDOW`` steps (of all steps when fewer)."""
        tail = self.losses[-WINDOW:]
        return sum(tail) / len(tail) if tail else math.nan

    def clearly_learning(self) -> bool:
        """True when the last window is clearly under chance (proof of a symptom fix)."""
        if self.num_classes is None or len(self.losses) < WINDOW:
            return False
        return self.window_mean() <= CLEAR_RATIO * chance_loss(self.num_classes)
