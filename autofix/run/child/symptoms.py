"""Training symptom detectors: non-finite loss and stalled loss, judged on evidence.

Standard library only: this module runs inside the child (loaded by ``bootstrap.py``) and
in autofix itself (to judge whether a symptom fix proved itself, and in the benchmarks).

The rule in words. A loss that goes non-finite is a symptom at once (``nan-loss``). A
stall (``stalled-loss``) is only called on positive evidence that the model is *not*
learning, never because learning is slow:

* chance level (:class:`Chance`), by task, from what the loss was computed on: a C-class
  classifier that has learned nothing predicts 1/C for every class, so its cross-entropy
  is ln C (1.0986 for 3 classes; C is the logits' width at the loss); "check your loss at
  initialisation is ln C" is standard practice (A. Karpathy, "A Recipe for Training Neural
  Networks", 2019; the HF course's chapter 8 checks the loss against it too). A causal or
  masked language model that has learned nothing beyond how often each token occurs
  predicts the unigram frequencies of the tokens it is scored on: its chance level is the
  unigram entropy H of those tokens (labels != -100), ln V (the vocabulary) when they are
  not known. A regression has none. A language model *starts above* H (a base model on
  new answer tokens: 4.14 = 1.37 x H on the tiny Llama's completion-only SFT,
  docs/how-it-works.md) and falls: for it a loss clearly under its own start is learning
  too (:meth:`LossMonitor.clearly_learning`), and a significant fall is never "learning
  slowly".
* when: a loss that stays near chance in the first steps is *not* evidence of a stall.
  Measured on the grid (``benchmarks/bench_stall_grid.py``, MiniLM-L6, lr 1e-5, batch 8):
  healthy runs sit within 1 % of ln C for 60-80 steps (10-step means 1.388 1.385 1.388
  1.384 1.384 1.381 1.379 1.377 1.370 1.369 1.366 1.354 for 4 classes), exactly like
  Trainer at lr 1e-3, which settles *at* ln C (1.415 ... 1.391 1.386 1.391 1.387 1.386).
  The two only part after about 80 steps. So, before the end of the (extended) budget only
  a learning rate of 0 or a return up from a lower loss is called a stall; the flat-loss
  verdict is made once, at the end.
* trend and noise (the flat verdict): a least-squares line is fitted to the last half of
  the steps; its slope has a standard error (from the residuals) and a 95 % confidence
  interval (Student t). Step losses of different batches are close to independent around
  the trend; a curved trend only widens the interval, which makes the rule more cautious.
* flat at chance: the last ``WINDOW`` steps average ``STALL_RATIO`` x ln C or more, the
  recent slope is not significantly negative, *and* even the steepest slope the interval
  allows would not bring the loss to ``CLEAR_RATIO`` x ln C within three times as many
  steps again as were run (``HORIZON``). A slow but real descent (lr 1e-5 above: slope
  -0.0004 +/- 0.0001 over steps 61-120) is significant, so it is never called flat.
* came back up: the last window is ``RISE_RATIO`` x ln C or more above the lowest window
  seen, and that rise is at least ``RISE_SIGMAS`` standard errors of a window mean (from
  the residual noise around the trend line: the rise is not one noisy batch). Adam at
  1e-3 on MiniLM often learns first and then comes back to chance (measured 10-step
  means: 0.80 1.09 0.70 0.57 0.80 0.88 0.93 1.09).
* learning rate: while the lr is still rising (warmup) nothing is judged flat; when the lr
  has been 0 for a whole window and the loss is at chance, the model cannot learn: that is
  a stall at once, whatever the noise.
* unclear: when the step budget is reached and the loss is neither clearly under chance
  nor judged, training goes on up to ``EXTENSION`` x the budget more steps
  (``should_extend``); at that bounded end ``final`` decides: a flat/returned loss is a
  stall, anything else is the finding ``learning-slowly`` (a report line, not a failure).
* proof that a fix worked (``clearly_learning``): the upper 95 % bound of the last window's
  mean is at or under ``CLEAR_RATIO`` x ln C, i.e. clearly under chance, not by luck.

Where the figures come from: measured on this project's samples (MiniLM-L6, MNLI-like
sets) and on the false-alarm grid ``benchmarks/bench_stall_grid.py`` (docs/how-it-works.md,
the stall rule).
Healthy runs at lr 5e-5 sit at ln C for 10-20 steps and reach 0.85 ln C by step 30-45;
a string Keras loss on logits is flat at 1.0986 (standard deviation < 0.01) from step 10.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

WINDOW = 10  # steps averaged for a level ("the last 10 steps")
SKIP = 10  # the first steps (the new head warming up) are left out of the trend line
MIN_STEPS = 30  # no stall verdict before this step (the head warms up for 10-20 steps)
STALL_RATIO = 0.9  # at or above this x ln C: "at chance"
CLEAR_RATIO = 0.85  # at or under this x ln C: "clearly under chance"
RISE_RATIO = 0.25  # a return to chance this far above the lowest window (x ln C) ...
RISE_SIGMAS = 4.0  # ... and this many standard errors of a window mean
HORIZON = 3.0  # "within three times as many steps again as were run"
#: A significant fall counts as learning only when, kept up for ``HORIZON`` x the steps run,
#: it would take at least this fraction of ln C off the loss: a loss pinned at chance
#: (the course TF script with a string Keras loss: 1.0986 for 75 steps) has a "significant"
#: slope of -1e-7 per step, while the slowest healthy MiniLM runs measured fall by
#: 0.00029 per step (0.10 over 3 x 120 steps, 7 % of ln 4).
MIN_DROP = 0.02
EXTENSION = 1.0  # an unclear run may train this x budget more steps before the verdict


def extended_budget(max_steps: int) -> int:
    """The step budget after the one extension of an unclear run (``EXTENSION`` x
    ``max_steps`` more steps, at least one): 120 for the default 60."""
    return max_steps + max(1, round(EXTENSION * max_steps))

#: A language model's (or a preference loss's) fall from its first window counts as
#: learning from this fraction of the chance level on (the slowest healthy LM sample, SFT
#: completion-only at lr 1e-4 on the tiny Llama, falls 4.332 -> 4.016 over 30 steps: 10 %
#: of H = 3.023; DPO at beta 0.1: 0.670 -> 0.607, 9 % of ln 2).
FALL_RATIO = 0.05
#: How the flat verdict's evidence starts (the parent tells it from the other two by it).
FLAT_EVIDENCE = "loss stalled near chance: "
ZERO_LR = 1e-12  # a learning rate at or under this is 0
#: The stall rule in words, from the constants above: the one phrase ``autofix fix -h``,
#: the README and the HTML report's legend use.
STALL_RULE = f"judged from step {MIN_STEPS} on, over the last {WINDOW} steps"

# Two-sided 95 % Student t quantiles by degrees of freedom (larger df: the nearest lower).
_T95 = ((1, 12.706), (2, 4.303), (3, 3.182), (4, 2.776), (5, 2.571), (6, 2.447),
        (8, 2.306), (10, 2.228), (15, 2.131), (20, 2.086), (25, 2.060), (30, 2.042),
        (40, 2.021), (60, 2.000), (120, 1.980))


@dataclass
class Symptom:
    """A confirmed symptom (``kind``: ``"nan-loss"`` or ``"stalled-loss"``) or, from
    :meth:`LossMonitor.final`, a finding (``"learning-slowly"``) that is not a failure."""

    kind: str
    step: int
    evidence: str


@dataclass(frozen=True)
class Trend:
    """Least-squares line through ``n`` step losses: ``slope`` (loss per step), its
    standard error ``se``, the 95 % half-width ``half`` and the residual standard
    deviation ``noise`` (loss units)."""

    n: int
    slope: float
    se: float
    half: float
    noise: float

    @property
    def steepest(self) -> float:
        """The most negative slope the 95 % interval allows."""
        return self.slope - self.half


def t95(df: int) -> float:
    """Two-sided 95 % Student t quantile for ``df`` degrees of freedom (table lookup)."""
    value = _T95[0][1]
    for d, t in _T95:
        if df >= d:
            value = t
    return value


def fit(values: list[float]) -> Trend | None:
    """Least-squares slope of ``values`` against their index; ``None`` under 3 values."""
    n = len(values)
    if n < 3:
        return None
    mx = (n - 1) / 2
    my = sum(values) / n
    sxx = sum((i - mx) ** 2 for i in range(n))
    slope = sum((i - mx) * (v - my) for i, v in enumerate(values)) / sxx
    residual = sum((v - my - slope * (i - mx)) ** 2 for i, v in enumerate(values))
    noise = math.sqrt(residual / (n - 2))
    se = noise / math.sqrt(sxx)
    return Trend(n, slope, se, t95(n - 2) * se, noise)


def chance_loss(num_classes: int) -> float:
    """Cross-entropy of uniform guessing over ``num_classes`` classes: ln C (nats)."""
    return math.log(num_classes)


#: :attr:`Chance.kind` values.
CLASSES = "classes"  # a classifier: ln C, C the logits' width at the loss
TOKENS = "tokens"  # a language model: the unigram entropy of the scored tokens
VOCAB = "vocab"  # a language model whose scored tokens are not known: ln V
PAIRS = "pairs"  # a preference loss over pairs (DPO's sigmoid loss): ln 2 at the start


@dataclass(frozen=True)
class Chance:
    """The loss of a model that has learned nothing of the task: ``value`` (nats), ``kind``
    (:data:`CLASSES`, :data:`TOKENS`, :data:`VOCAB`, :data:`PAIRS`), ``label`` (how the
    evidence names it: ``"ln 3"``, ``"H"``), ``classes`` (C or V when the level is a log
    of a count) and ``tokens`` (how many scored tokens the entropy was measured on)."""

    value: float
    kind: str = CLASSES
    label: str = ""
    classes: int | None = None
    tokens: int = 0

    @classmethod
    def of_classes(cls, num_classes: int) -> Chance:
        """ln C for a C-class classifier (C >= 2)."""
        return cls(chance_loss(num_classes), CLASSES, f"ln {num_classes}", num_classes)

    @classmethod
    def of_vocab(cls, vocab: int) -> Chance:
        """ln V for a language model whose scored tokens are not known."""
        return cls(chance_loss(vocab), VOCAB, f"ln {vocab}", vocab)

    @classmethod
    def of_tokens(cls, counts: list[int] | dict[int, int]) -> Chance | None:
        """The unigram entropy (nats) of the scored tokens' ``counts`` (per token id, or a
        list of counts); ``None`` for fewer than 2 distinct tokens."""
        values = [c for c in (counts.values() if isinstance(counts, dict) else counts) if c]
        n = sum(values)
        if len(values) < 2:
            return None
        entropy = -sum(c / n * math.log(c / n) for c in values)
        return cls(entropy, TOKENS, "H", None, n)

    @classmethod
    def pairs(cls) -> Chance:
        """ln 2: a preference loss -log sigmoid(margin) at a margin of 0 (DPO's start)."""
        return cls(math.log(2), PAIRS, "ln 2", 2)

    @property
    def from_start(self) -> bool:
        """True when a healthy run starts above this level and falls (a language model):
        a clear fall from the run's own start counts as learning."""
        return self.kind in (TOKENS, VOCAB)

    @property
    def fall_is_learning(self) -> bool:
        """True when a significant fall from the run's start is learning, not "learning
        slowly": a language model (it starts above chance) and a preference loss (it starts
        exactly at ln 2 and falls slowly by design: DPO at beta 0.1 on the tiny Llama,
        0.670 over steps 1-10, 0.607 over steps 21-30)."""
        return self.kind in (TOKENS, VOCAB, PAIRS)

    def describe(self) -> str:
        """One line for the evidence: what the level is and where it comes from."""
        if self.kind == TOKENS:
            return (f"H = {self.value:.3f}, the unigram entropy of the {self.tokens:,} scored "
                    "tokens seen (labels != -100)")
        if self.kind == VOCAB:
            return f"ln {self.classes} = {self.value:.3f} (the vocabulary)"
        if self.kind == PAIRS:
            return f"ln 2 = {self.value:.3f} (a preference loss at a margin of 0)"
        return f"ln {self.classes} = {self.value:.3f} ({self.classes} classes)"

    def to_json(self) -> dict[str, object]:
        """The ``chance`` event's payload (contract)."""
        return {"value": self.value, "kind": self.kind, "label": self.label,
                "classes": self.classes, "tokens": self.tokens}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Chance | None:
        """The inverse of :meth:`to_json`; ``None`` when ``value`` is missing or not a
        positive number."""
        value, classes, tokens = data.get("value"), data.get("classes"), data.get("tokens")
        if not isinstance(value, (int, float)) or not value > 0:
            return None
        return cls(float(value), str(data.get("kind") or CLASSES), str(data.get("label") or ""),
                   classes if isinstance(classes, int) else None,
                   tokens if isinstance(tokens, int) else 0)


def mean(values: list[float]) -> float:
    """Arithmetic mean (NaN for no values)."""
    return sum(values) / len(values) if values else math.nan


def _var(values: list[float]) -> float:
    """Sample variance (0 for fewer than 2 values)."""
    if len(values) < 2:
        return 0.0
    centre = mean(values)
    return sum((x - centre) ** 2 for x in values) / (len(values) - 1)


@dataclass
class LossMonitor:
    """Feed it each optimizer step's loss (and lr); it says when a symptom is confirmed.

    ``level`` is the task's chance level (:class:`Chance`); ``num_classes`` (a classifier's
    C) is the short way to give ln C. With neither, only non-finite losses are judged:
    there is no chance level to compare with. The level may be set later
    (:meth:`set_level`: the child measures it at the first training loss).
    """

    num_classes: int | None = None
    losses: list[float] = field(default_factory=list)
    lrs: list[float | None] = field(default_factory=list)
    lowest: float = math.inf  # lowest window mean seen so far
    level: Chance | None = None

    def __post_init__(self) -> None:
        if self.level is None and self.num_classes is not None and self.num_classes >= 2:
            self.level = Chance.of_classes(self.num_classes)

    def set_level(self, level: Chance | None) -> None:
        """Judge against ``level`` from now on (``None``: no chance level)."""
        self.level = level
        self.num_classes = level.classes if level is not None and level.kind == CLASSES \
            else None

    def add(self, loss: float, lr: float | None = None) -> Symptom | None:
        """Record the next step's loss; returns the symptom it confirms, if any."""
        self.losses.append(loss)
        self.lrs.append(lr)
        step = len(self.losses)
        if not math.isfinite(loss):
            return Symptom("nan-loss", step, f"loss is {loss} at step {step}, the first "
                                             "non-finite step")
        if self.level is None:
            return None
        if step >= WINDOW:
            self.lowest = min(self.lowest, self.window_mean())
        if step < MIN_STEPS:
            return None
        return self.zero_lr() or self.returned()

    # --- the evidence -------------------------------------------------------------------

    @property
    def chance(self) -> float:
        """The chance level in nats (ln 2 when none is known: never used for a verdict)."""
        return self.level.value if self.level is not None else math.log(2)

    @property
    def label(self) -> str:
        """How the evidence names the chance level (``"ln 3"``, ``"H"``)."""
        return self.level.label if self.level is not None else "ln 2"

    def window_mean(self) -> float:
        """Mean loss of the last ``WINDOW`` steps (of all steps when fewer)."""
        return mean(self.losses[-WINDOW:])

    def trend(self) -> Trend | None:
        """The least-squares trend of every step after the first ``SKIP``."""
        return fit(self.losses[SKIP:])

    def _where(self) -> str:
        step = len(self.losses)
        return f"mean of steps {max(1, step - WINDOW + 1)}-{step} is {self.window_mean():.3f}"

    def _at_chance(self) -> bool:
        return self.window_mean() >= STALL_RATIO * self.chance

    def warming_up(self) -> bool:
        """True while the lr still rises (last lr above the lr a window earlier by 1 %)."""
        known = [lr for lr in self.lrs[-WINDOW:] if lr is not None]
        return len(known) >= 2 and known[-1] > known[0] * 1.01

    def zero_lr(self) -> Symptom | None:
        """A stall when the lr was 0 over the whole last window and the loss is at chance."""
        tail = self.lrs[-WINDOW:]
        if len(tail) < WINDOW or any(lr is None or lr > ZERO_LR for lr in tail):
            return None
        if not self._at_chance():
            return None
        step = len(self.losses)
        return Symptom("stalled-loss", step,
                       f"loss stalled near chance with a learning rate of 0: {self._where()} "
                       f">= {STALL_RATIO} x {self.label} = "
                       f"{STALL_RATIO * self.chance:.3f}, lr 0 over steps "
                       f"{step - WINDOW + 1}-{step}")

    def returned(self) -> Symptom | None:
        """A stall when the loss learned, then came back up (beyond the noise)."""
        trend = self.trend()
        if trend is None:
            return None
        rise = self.window_mean() - self.lowest
        needed = max(RISE_RATIO * self.chance,
                     RISE_SIGMAS * trend.noise * math.sqrt(2 / WINDOW))
        if rise < needed:
            return None
        return Symptom("stalled-loss", len(self.losses),
                       f"loss stopped falling: {self._where()}, up from "
                       f"its lowest {WINDOW}-step mean {self.lowest:.3f} by {rise:.3f} "
                       f"(> {RISE_RATIO} x {self.label} and > {RISE_SIGMAS:g} "
                       f"standard errors)")

    def falling(self, horizon: float = HORIZON) -> bool:
        """True when the loss over the last half of the steps falls significantly (95 %
        interval of the slope under 0) and measurably (kept up for ``horizon`` x the steps
        run it takes ``MIN_DROP`` x the chance level off the loss)."""
        step = len(self.losses)
        trend = fit(self.losses[-max(step // 2, 3):])
        return trend is not None and trend.slope + trend.half < 0 \
            and -trend.slope * horizon * step >= MIN_DROP * self.chance

    def flat(self, horizon: float = HORIZON) -> Symptom | None:
        """A stall when the loss is at chance, its recent trend (the last half of the steps)
        is not significantly falling, and even the steepest slope of its 95 % interval would
        not take it clearly under chance within ``horizon`` x the steps run."""
        step = len(self.losses)
        trend = fit(self.losses[-max(step // 2, 3):])
        if trend is None or not self._at_chance() or self.warming_up():
            return None
        if self.falling(horizon):
            return None  # significantly and measurably falling: learning, however slowly
        target = CLEAR_RATIO * self.chance
        projected = self.window_mean() + min(trend.steepest, 0.0) * horizon * step
        if projected <= target:
            return None
        first = mean(self.losses[:WINDOW])
        return Symptom("stalled-loss", step,
                       f"{FLAT_EVIDENCE}{self._where()} >= {STALL_RATIO} x "
                       f"{self.label} = {STALL_RATIO * self.chance:.3f} (steps "
                       f"1-{WINDOW}: {first:.3f}); slope over the last {trend.n} steps "
                       f"{trend.slope:+.5f} +/- {trend.half:.5f} per step (95 %), so even "
                       f"at its steepest the loss would be {projected:.3f}, not under "
                       f"{CLEAR_RATIO} x {self.label} = {target:.3f}, by step "
                       f"{step + round(horizon * step)}")

    # --- the budget ----------------------------------------------------------------------

    def should_extend(self) -> bool:
        """At the step budget: True when the verdict is unclear (a chance level is known,
        the loss is not clearly under it, nothing was confirmed), so training goes on. A
        budget under :data:`MIN_STEPS` (``--max-steps 3`` for a quick check) is never
        extended: no stall verdict could come of it."""
        if self.level is None or not self.losses:
            return False
        if len(self.losses) < MIN_STEPS:  # a budget too short for any verdict: no extension
            return False
        return not self.clearly_learning()

    def final(self) -> Symptom | None:
        """The verdict at the end of the (extended) budget: a stall on evidence, else the
        finding ``learning-slowly`` when the loss is not clearly under chance, else None
        (also for runs shorter than :data:`MIN_STEPS`: too short for either, for a
        language model whose loss still falls significantly: it started above chance, and
        for a run whose last window's mean is under the line already while the loss falls
        or fell significantly: only the window's noise keeps its upper bound above the
        line; a healthy accelerate loop of 40 steps, 1.098 -> 0.913 against a line of
        0.934, drew the finding on some seeds and not on others)."""
        if self.level is None or len(self.losses) < WINDOW:
            return None
        if not all(math.isfinite(x) for x in self.losses):
            return None
        if self.clearly_learning():
            return None
        step = len(self.losses)
        if step < MIN_STEPS:  # too short a run (a quick --max-steps check) to say anything
            return None
        verdict = self.zero_lr() or self.returned() or self.flat()
        if verdict is not None:
            return verdict
        # a language model or preference loss that fell from its start, or any run under
        # the line already (only the window's noise keeps its bound above): learning
        if (self.level.fall_is_learning or self.under_line()) \
                and (self.falling() or self.fell()):
            return None
        trend = self.trend()
        slope = f"; slope {trend.slope:+.5f} +/- {trend.half:.5f} per step (95 %)" \
            if trend else ""
        warm = "; the learning rate was still rising (warmup not finished)" \
            if self.warming_up() else ""
        return Symptom("learning-slowly", step,
                       f"learning slowly: loss {mean(self.losses[:WINDOW]):.3f} over steps "
                       f"1-{WINDOW}, {self.window_mean():.3f} over steps "
                       f"{step - WINDOW + 1}-{step}{slope}; not yet clearly under chance "
                       f"({CLEAR_RATIO} x {self.label} = "
                       f"{CLEAR_RATIO * self.chance:.3f}) after {step} steps, but no evidence "
                       f"of a stall{warm}")

    def under_line(self) -> bool:
        """True when the last window's mean (not its upper 95 % bound, as in
        :meth:`clearly_learning`) is at or under ``CLEAR_RATIO`` x :meth:`reference`."""
        return self.window_mean() <= CLEAR_RATIO * self.reference()

    def fell(self) -> bool:
        """True when the last window's mean is under the first window's by at least
        ``FALL_RATIO`` x the chance level and significantly (the 95 % interval of the
        difference of the two means, Welch, excludes 0)."""
        if len(self.losses) < 2 * WINDOW:
            return False
        first, last = self.losses[:WINDOW], self.losses[-WINDOW:]
        drop = mean(first) - mean(last)
        if not math.isfinite(drop) or drop < FALL_RATIO * self.chance:
            return False
        spread = math.sqrt(_var(first) / len(first) + _var(last) / len(last))
        return drop - t95(WINDOW - 1) * spread > 0

    def reference(self) -> float:
        """The level a clear fall is measured against: the chance level, or for a language
        model (:attr:`Chance.from_start`) the mean of its first ``WINDOW`` steps when that
        is higher (it starts above chance; a fall from there is learning)."""
        if self.level is not None and self.level.from_start and len(self.losses) >= WINDOW:
            start = mean(self.losses[:WINDOW])
            if math.isfinite(start):
                return max(self.chance, start)
        return self.chance

    def clearly_learning(self) -> bool:
        """True when the upper 95 % bound of the last window's mean loss is at or under
        ``CLEAR_RATIO`` x the chance level (x the run's start, for a language model that
        started above it: :meth:`reference`): the proof that a symptom fix worked."""
        if self.level is None or len(self.losses) < WINDOW:
            return False
        tail = self.losses[-WINDOW:]
        centre = mean(tail)
        if not math.isfinite(centre):
            return False
        sd = math.sqrt(sum((x - centre) ** 2 for x in tail) / (len(tail) - 1))
        upper = centre + t95(len(tail) - 1) * sd / math.sqrt(len(tail))
        return upper <= CLEAR_RATIO * self.reference()
