"""What a fault category is: how it shows, which facts it needs, and how it behaves.

A :class:`Category` is data plus a few optional callables (its behaviour), so that
everything autofix knows about one fault lives in one place: the messages and sites it
shows with (``patterns``, ``types``, ``raised_in``, ``frame_patterns``,
``frame_guards``), the category the run's facts point to instead (``refine``), the advice
it derives from the probe's facts (``advice``) or from the facts at the failure, the
library's message included (``advise``), how its evidence is worded for a person
(``explain``), a rerun it needs before it is trusted (``rerun_env``), the root causes
behind a symptom (``root_causes``), a trial fix it proposes for a healthy run whose
evidence still shows the fault (``trial``), and why autofix makes no edit for it (``no_recipe``).
A fault that raises nothing is found by hooks the engine calls over the whole registry: on a
run's facts (``findings``; ``symptom_finding`` for a symptom that is a finding instead of a
failure; ``symptom_diagnosis``, a symptom's own root-cause analysis, and ``symptom_cause``,
a category that claims a symptom from its evidence), on the script's source
(``source_findings`` for a run that raised nothing, ``source_diagnoses`` for faults that
join a failing run's fixes), whether a finding is only advice (``advisory``); and what the
run after its fix must show (``proof``).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from autofix.categories.breaches import breach_of
from autofix.categories.failure import Failure
from autofix.types import (
    Diagnosis,
    Finding,
    ProbeReport,
    RunResult,
    SourceFacts,
    SymptomReport,
)

#: The saved example tracebacks, one folder per category id.
EXAMPLES_DIR = Path(__file__).parent / "examples"
#: ``Diagnosis.via`` of a fault read from the source, not raised by a run
#: (``Category.source_diagnoses``): the commit message words it as read.
SOURCE_SCAN = "source-scan"


class Kind(str, enum.Enum):
    """How a category shows: a traceback, a training symptom the probe confirms, a root
    cause found behind a symptom, a property of the run itself, or a finding of a run that
    trained."""

    ERROR = "error"
    SYMPTOM = "symptom"
    ROOT_CAUSE = "root-cause"
    RUN = "run"
    #: Something a run that trained without an error got wrong (a :class:`Finding`).
    FINDING = "finding"


@dataclass(frozen=True)
class RootCause:
    """A rule naming a root cause behind a symptom from the run's facts: when
    ``found(probe)`` holds, ``category`` (which has recipes) is a cause."""

    category: str
    found: Callable[[ProbeReport], bool]
    why: str = ""


@dataclass(frozen=True)
class Proof:
    """What the healthy run after a fix of a category must show beyond the fault gone
    (:mod:`autofix.categories.proofs`). The default: nothing more for an error's fix, a
    loss clearly under the chance level for a symptom's fix or a trial."""

    #: A symptom's fix or a trial owes a loss finite and falling instead of one under the
    #: chance level (a diverging loss: a regression has no chance level to get under).
    falling: bool = False
    #: A silent fault's fix changes how the script trains or evaluates: its finding must be
    #: gone on the next run and the script's own evaluation no worse than before it.
    invariant: bool = False
    #: ``"loss"`` or ``"metric"``: the kind of the script's figures the fix changes the
    #: meaning of (a loss given logits instead of probabilities is on another scale), left
    #: out of the comparison before and after it.
    changes: str = ""
    #: The category's own invariant on the run after the fix: why it is still broken
    #: ("" when it holds), checked before its finding.
    holds: Callable[[RunResult], str] | None = None


@dataclass(frozen=True)
class Place:
    """Where a run happened, for wording evidence: the folder the script ran in and the
    repository root (paths in evidence are made relative to it)."""

    cwd: Path
    root: str


@dataclass(frozen=True)
class Category:
    """One fault category.

    ``patterns`` are regular expressions searched in ``"Type: message"`` of the exception
    and of the exceptions it was chained from; ``types`` restricts by exception class name
    (empty: any). ``examples`` name files in ``autofix/categories/examples/<id>/``.
    Frames are matched as ``"file:function: text"`` strings
    (:func:`autofix.categories.sites.frame_keys`).
    """

    id: str
    title: str
    patterns: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    hint: str = ""
    #: Categories this one wins over when both match the same exception chain (the same
    #: message can have two causes; a chained cause decides).
    overrides: tuple[str, ...] = ()
    kind: Kind = Kind.ERROR
    #: Environment for a rerun before this category is trusted: the first traceback is
    #: not the real one (a CUDA device-side assert points at the wrong line), so the
    #: engine reruns with this environment and classifies that run instead.
    rerun_env: Mapping[str, str] | None = None
    #: Shown while the rerun runs and in the commit ("rerun on CPU with ...").
    rerun_note: str = ""
    #: For symptoms: the rules naming fixable root causes from the run's facts, in order.
    root_causes: tuple[RootCause, ...] = ()
    #: The root causes are alternative repairs of one fault (a diverging loss): only the
    #: first cause whose recipe applies is fixed, and the next is tried when that fix does
    #: not prove itself. ``False``: every cause found gets its fix at once.
    alternatives: bool = False
    #: The ids of the recipes that fix this category, in the order they are tried: its own
    #: and those that fix it as well (``Recipe.also_fixes``); the first that applies is
    #: committed, and the next is tried when that fix does not prove itself. A category
    #: with several recipes names them all (``tests/test_recipe_order.py``); a recipe it
    #: leaves out (a plugin's) is tried after those it names.
    recipes: tuple[str, ...] = ()
    #: Sites (:data:`autofix.categories.sites.SITES`) the error must be raised in (empty:
    #: anywhere). Only an exception without any frame (a bare message) is not restricted.
    raised_in: tuple[str, ...] = ()
    #: Regexes of which one must match some frame (empty: none needed); e.g. the
    #: embedding lookup of ``input_ids``, not of positions.
    frame_patterns: tuple[str, ...] = ()
    #: Regexes of which every one must match some frame (empty: none needed): for a
    #: message too common to mean this fault anywhere else (a pandas ``KeyError`` while
    #: the DataLoader fetches rows).
    frame_guards: tuple[str, ...] = ()
    #: The id of the category the run's facts point to instead of this one ("": keep):
    #: the same message, another cause (unpadded batches whose labels are strings).
    refine: Callable[[ProbeReport], str] | None = None
    #: One sentence or two naming the concrete change, from the probe's facts ("": the
    #: facts say no more than ``hint``).
    advice: Callable[[ProbeReport], str] | None = None
    #: The same, from the facts at the failure (:class:`~autofix.categories.failure.Failure`:
    #: the exception's message, its frames and the objects in them, the probe report): the
    #: change a library's own message names ("" : nothing more than ``hint``). Tried
    #: before ``advice``.
    advise: Callable[[Failure], str] | None = None
    #: The diagnosis worded for a person, given where the run happened (a missing file
    #: named with the folder it was looked up from).
    explain: Callable[[Diagnosis, Place], Diagnosis] | None = None
    #: For a healthy run whose evidence still shows this fault (not clearly learning at
    #: 1e-3, or learning at an update ratio far above fine-tuning's): a trial diagnosis of
    #: this category (its fix is kept only when the next run proves it), else ``None``.
    trial: Callable[[RunResult], Diagnosis | None] | None = None
    #: Why autofix commits nothing for this category when it has no recipe (shown as the
    #: reason a session gave up); a category without a recipe must say why no edit is safe.
    no_recipe: str = "no recipe for it"
    #: What the facts at the failure (:class:`~autofix.categories.failure.Failure`: the
    #: objects in the failing frames, the run's probe report) say of this fault: ``True``
    #: they show it, ``False`` they show another fault (this category does not fire),
    #: ``None`` the facts that would tell are not there.
    check: Callable[[Failure], bool | None] | None = None
    #: Fire only when ``check`` says ``True``: the message alone is too common to mean
    #: this fault (a category with a ``check`` and no ``patterns`` or ``types`` is matched
    #: on its facts alone, and needs them).
    needs_facts: bool = False
    #: For a symptom (:attr:`Kind.SYMPTOM`): the diagnosis of a run whose probe confirmed
    #: it, named by its root causes found in the run's facts (``root_causes``), else the
    #: symptom itself with what the evidence shows.
    symptom_diagnosis: Callable[[RunResult], Diagnosis] | None = None
    #: This category as the cause of a symptom the probe confirmed, read from the symptom's
    #: own evidence (the first non-finite batch's labels against the head): its diagnosis
    #: (``via`` the symptom), else ``None``. Tried in registration order before the
    #: symptom's own ``symptom_diagnosis``.
    symptom_cause: Callable[[SymptomReport], Diagnosis | None] | None = None
    #: The API check may report it before the first run (drift the installed library's
    #: signatures and source show without running the script): its findings take this
    #: category when the message matches, and are fixed, or reported, before run 1.
    before_run: bool = False
    #: The code does not parse (a ``SyntaxError``): after a fix, the run that shows it was
    #: broken by that fix, since the script parsed before it.
    unparsable: bool = False
    #: What the healthy run after a fix of this category must show (:class:`Proof`).
    proof: Proof = Proof()
    #: What a run that raised nothing still got wrong of this fault, read from its facts
    #: (the probe's ``train_facts``, its trainers and steps): findings of this category's id
    #: (empty: none). Called on every run judged healthy, in registration order.
    findings: Callable[[RunResult], list[Finding]] | None = None
    #: For a run whose probe confirmed a symptom: the finding of this category's id that
    #: symptom stands for instead of a failure (a flat loss with no known cause is learning
    #: slowly), else ``None``. A run one of these answers for is healthy.
    symptom_finding: Callable[[RunResult], Finding | None] | None = None
    #: A finding that is advice, not a fault (a loss that falls, but slowly, may be the
    #: script's own pace): a session that leaves it ends ``clean``, one that leaves any
    #: other finding ``findings``.
    advisory: bool = False
    #: What the script's source shows of this fault on a run that raised nothing, from the
    #: source readers' facts (:data:`~autofix.types.SourceFacts`: a shuffling evaluation
    #: loader, statistics taken before the split): findings of this category's id.
    source_findings: Callable[[SourceFacts], list[Finding]] | None = None
    #: Faults of this category read from the source that a run stopped by another fault
    #: cannot reach (a hand loop's evaluation, which runs after training): diagnoses
    #: (``via`` :data:`SOURCE_SCAN`) that join a failing run's fix group, proved by the
    #: same verifying run; they never start a fix by themselves.
    source_diagnoses: Callable[[SourceFacts], list[Diagnosis]] | None = None
    compiled: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compiled", tuple(re.compile(p) for p in self.patterns))

    def matches(self, exc_type: str, message: str, site: str = "",
                frames: tuple[str, ...] = ()) -> bool:
        """True when an exception of class ``exc_type`` (short name) with ``message``,
        raised at ``site`` (:func:`autofix.categories.sites.raised_site`, "" unknown)
        with ``frames`` (``"file:function: text"`` strings) shows this fault."""
        if self.types and exc_type not in self.types:
            return False
        if self.raised_in and frames and site not in self.raised_in:
            return False
        if self.frame_patterns and not any(re.search(p, f) for p in self.frame_patterns
                                           for f in frames):
            return False
        if self.frame_guards and not all(any(re.search(g, f) for f in frames)
                                         for g in self.frame_guards):
            return False
        if not self.compiled:
            return bool(self.types) or self.check is not None
        text = f"{exc_type}: {message}"
        return any(p.search(text) for p in self.compiled)

    def fits(self, failure: Failure) -> bool:
        """What :attr:`check` says of ``failure`` allows this category: not refuted, and
        shown when the category needs its facts (:attr:`needs_facts`, or no message
        patterns to go by). A call contract broken at the failure whose category is this
        one (:func:`autofix.categories.breaches.breach_of`) shows it whatever ``check``
        reads."""
        found = breach_of(failure.exc)
        if found is not None and found.category == self.id:
            return True  # the contract of the failing call, measured on its arguments
        if self.check is None:
            return True
        try:
            verdict = self.check(failure)
        except Exception:  # noqa: BLE001 - facts of an unexpected shape tell nothing
            verdict = None
        if self.needs_facts or not (self.compiled or self.types):
            return verdict is True
        return verdict is not False

    def matching_line(self, message: str) -> str:
        """The first line of ``message`` a pattern matches ("" when none does).

        TensorFlow wraps the real error deep in a long message ("Graph execution error:
        ... Received a label value of 2 ..."); this is the line worth quoting.
        """
        for line in message.splitlines():
            if any(p.search(line) for p in self.compiled):
                return line.strip()
        return ""

    def example_paths(self) -> list[Path]:
        """The saved example tracebacks of this category."""
        return [EXAMPLES_DIR / self.id / name for name in self.examples]
