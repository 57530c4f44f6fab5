"""Shared dataclasses: what a run produced, what it was diagnosed as, what a recipe did.

Every outcome is typed; nothing in autofix returns ``None`` to mean both "nothing to
do" and "failed" (the aider weak spot named in the project's style guide).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar


@dataclass(frozen=True)
class Frame:
    """One traceback frame: file path as the child saw it, 1-based line, function, text."""

    file: str
    line: int
    function: str
    text: str = ""


@dataclass(frozen=True)
class FrameFacts:
    """What the objects in one failing frame were (the probe's facts at the failure):
    the frame's file (as the child saw it), line and function, whether it is in the
    user's own files (``user``), and a summary per local name (``values``: JSON of
    ``autofix/run/child/facts.py``: a tensor's ``dtype``/``shape``/``min``/``max``/
    ``negatives``/``ignored``, a mapping's ``keys``, a dataset's ``columns``...)."""

    file: str
    line: int
    function: str
    user: bool = False
    values: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class ExceptionInfo:
    """An exception as reported by the probe, or parsed from traceback text.

    ``type`` is the qualified name (``builtins.IndexError`` or just ``IndexError`` when
    parsed from text); ``frames`` run from outermost to innermost; ``chain`` holds the
    exceptions this one was raised from or during, outermost cause first; ``facts`` the
    facts of the frames that matter, innermost first (none when parsed from text);
    ``contract`` the call contract the failure broke (:attr:`contract`).
    """

    type: str
    message: str
    frames: tuple[Frame, ...] = ()
    chain: tuple[ExceptionInfo, ...] = ()
    facts: tuple[FrameFacts, ...] = ()
    #: The input contract of the failing call its real arguments broke, with their runtime
    #: provenance (JSON of ``autofix/run/child/call_contracts/``; empty when none was
    #: broken, or when parsed from text).
    contract: Mapping[str, Any] = field(default_factory=dict)
    #: The last forward of a model from the user's code before the failure: ``grad``
    #: (gradients were on), ``graph`` (an output required grad), ``training`` (the mode);
    #: empty when none was seen (inside ``Trainer``, a Keras model, parsed from text).
    forward: Mapping[str, bool] = field(default_factory=dict)

    @property
    def short_type(self) -> str:
        """The class name without its module (``IndexError``)."""
        return self.type.rsplit(".", 1)[-1]

    def headline(self) -> str:
        """``Type: first line of the message``, the line a person quotes."""
        first = self.message.strip().splitlines()[0] if self.message.strip() else ""
        return f"{self.short_type}: {first}" if first else self.short_type


@dataclass(frozen=True)
class DatasetFacts:
    """What the probe measured on one dataset given to ``Trainer``.

    ``label_classes`` comes from a ``ClassLabel`` feature; otherwise ``label_min`` and
    ``label_max`` are measured over the whole split (``Dataset.unique``), not one batch.
    ``label_kind`` is ``"int"``, ``"str"``, ``"float"`` or ``""`` when there is no label column.
    """

    role: str
    columns: tuple[str, ...]
    num_rows: int | None = None
    label_column: str = ""
    label_kind: str = ""
    label_classes: int | None = None
    label_min: float | None = None
    label_max: float | None = None


@dataclass(frozen=True)
class TrainerFacts:
    """Facts about one ``Trainer`` the script built: its datasets and model head."""

    trainer_class: str
    model_class: str
    num_labels: int | None
    datasets: tuple[DatasetFacts, ...] = ()

    def dataset(self, role: str) -> DatasetFacts | None:
        """The facts for ``role`` (``"train"`` or ``"eval"``), if the probe saw one."""
        return next((d for d in self.datasets if d.role == role), None)


@dataclass(frozen=True)
class StepRecord:
    """One optimizer step seen by the probe: 1-based step, loss (may be NaN), learning rate."""

    step: int
    loss: float | None
    lr: float | None = None


@dataclass(frozen=True)
class Phase:
    """One phase a run reached after (or besides) its training steps, in order: ``kind``
    (``evaluate``, ``save``, ``reload``, ``predict``), the optimizer step it came at, ``what``
    ran it (``Trainer.evaluate``, ``torch.save``, a hand loop's forwards not trained on),
    and the held-out ``metrics`` the probe measured on a hand loop's evaluation
    (``held_out_loss``, ``held_out_accuracy``, ``held_out_rows``; empty otherwise)."""

    kind: str
    step: int
    what: str
    metrics: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class SampleLoss:
    """One sample of the batch where the loss first went non-finite (``loss`` ``None``:
    the label is outside the logits, so no loss could be computed for it)."""

    index: int
    label: int
    loss: float | None


@dataclass(frozen=True)
class SymptomReport:
    """A training symptom the probe confirmed (``kind``: ``nan-loss`` or ``stalled-loss``).

    For ``nan-loss`` with a captured batch, ``samples`` holds the per-sample losses of the
    first bad batch and ``num_labels`` the model's head size.
    """

    kind: str
    step: int
    evidence: str
    num_classes: int | None = None
    num_labels: int | None = None
    samples: tuple[SampleLoss, ...] = ()


@dataclass(frozen=True)
class ChanceLevel:
    """The task's chance level the probe measured at the training loss (``chance`` event;
    the child's ``symptoms.Chance``): ``value`` in nats, ``kind`` (``classes``: ln C of a
    classifier, ``tokens``: the unigram entropy of a language model's scored tokens,
    ``vocab``: ln V, ``pairs``: a preference loss's ln 2), ``label`` as the evidence names
    it (``"ln 3"``, ``"H"``), ``classes`` (C or V) and ``tokens`` (scored tokens counted)."""

    value: float
    kind: str = "classes"
    label: str = ""
    classes: int | None = None
    tokens: int = 0


@dataclass(frozen=True)
class KerasFacts:
    """How a Keras model was compiled: ``loss`` is the string given, the loss class name
    (with ``from_logits`` from its config) or a loss function's name (``dummy_loss``: the
    HF model's internal loss, ``compile`` without ``loss``; ``None``: no loss); ``keras``
    the module the model's class comes from (``tf_keras`` or ``keras``)."""

    keras: str
    model_class: str
    hf_model: bool
    num_labels: int | None
    optimizer: str
    lr: float | None
    loss: str | None
    from_logits: bool | None


@dataclass(frozen=True)
class SampledSplit:
    """A dataset split the probe cut for a diagnosis run (``--sample-rows``): where it was
    loaded (``load_dataset``, ``Dataset.from_json``...), its split name, its full and kept
    row counts, and the label range measured on the whole split before cutting."""

    origin: str
    split: str
    rows: int
    kept: int
    label_column: str = ""
    label_min: float | None = None
    label_max: float | None = None


@dataclass(frozen=True)
class Finding:
    """Something a healthy run showed that a person should know, not a failure:
    ``kind`` (``learning-slowly``, ``constant-prediction``, ``regression-on-class-ids``,
    ...), the step it was found at (0: not tied to a step) and the evidence line."""

    kind: str
    step: int
    evidence: str


#: What the source readers (``autofix/toolkit/source_findings.py``) found in a script's
#: program, by reading: each a list of JSON-like records (a line, the code found there and
#: what the reading measured), the source's counterpart of the probe's facts. Read by the
#: categories' source hooks (``Category.source_findings``, ``Category.source_diagnoses``).
SourceFacts = Mapping[str, list[dict[str, Any]]]


@dataclass
class PreflightFault:
    """A fault a preflight check found that raises nothing but trains wrongly (issue 8):
    the check's name, the category id of the fault and the evidence line."""

    check: str
    category: str
    evidence: str


@dataclass
class ProbeReport:
    """Everything the probe inside the child reported, in arrival order."""

    versions: dict[str, str] = field(default_factory=dict)
    exception: ExceptionInfo | None = None
    trainers: list[TrainerFacts] = field(default_factory=list)
    datasets: list[DatasetFacts] = field(default_factory=list)
    keras: list[KerasFacts] = field(default_factory=list)
    steps: list[StepRecord] = field(default_factory=list)
    symptom: SymptomReport | None = None
    num_classes: int | None = None
    #: The chance level measured at the training loss (``None``: none, e.g. a regression).
    chance: ChanceLevel | None = None
    budget_reached: bool = False
    exit_code: int | None = None
    #: ``probe_error`` events: "where: message" of a probe that failed inside the child
    #: (the script ran on; the facts of that probe are missing).
    probe_errors: list[str] = field(default_factory=list)
    rank: int | None = None  # issue 12: the rank whose exception is ``exception`` (launchers)
    #: A distributed launch: the exit code each rank's probe saw the script end with
    #: (rank -> code), written before the interpreter's teardown.
    exits: dict[int, int] = field(default_factory=dict)
    sampled: list[SampledSplit] = field(default_factory=list)
    #: Preflight findings at ``Trainer.train()``: (check name, the exception it raised).
    preflight: list[tuple[str, ExceptionInfo]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # e.g. learning-slowly
    #: ``preflight_fault`` events: faults found before training that raise nothing.
    faults: list[PreflightFault] = field(default_factory=list)
    extended_to: int | None = None  # the step budget after an unclear verdict extended it
    facts: dict[str, Any] = field(default_factory=dict)  # "train_facts" event (issue 8)
    #: The script's evaluations, in order: (optimizer step, {metric: value}).
    evaluations: list[tuple[int, dict[str, float]]] = field(default_factory=list)
    #: The phases the run reached besides training (evaluations, saving, reloading,
    #: prediction), in order (``phase`` events).
    phases: list[Phase] = field(default_factory=list)
    #: The script's own length in optimizer steps as the probe read it (the ``total`` of
    #: the last ``step`` event; 0: unknown).
    total_steps: int = 0


class RunOutcome(str, enum.Enum):
    """How a child run ended."""

    OK = "ok"  # exit 0
    BUDGET = "budget"  # the step budget was reached (the probe stopped training)
    FAILED = "failed"  # non-zero exit
    TIMEOUT = "timeout"  # killed at --timeout
    INTERRUPTED = "interrupted"  # killed because the user pressed Ctrl-C


@dataclass
class RunResult:
    """One child run: exit status, bounded output, probe report, wall seconds."""

    outcome: RunOutcome
    returncode: int | None
    seconds: float
    output_tail: str
    output_bytes: int
    probe: ProbeReport
    env_overrides: dict[str, str] = field(default_factory=dict)
    #: Why a launcher's failure was set aside (:func:`autofix.run.runner.teardown_failure`):
    #: every rank's script had ended cleanly, a process failed after it; ``""``: none.
    teardown: str = ""

    @property
    def last_line(self) -> str:
        """The last non-empty line the script printed (for the spinner and reports)."""
        for line in reversed(self.output_tail.splitlines()):
            if line.strip():
                return line.strip()
        return ""


@dataclass(frozen=True)
class Diagnosis:
    """A run sorted into a fault category.

    ``evidence`` is the one line a person would quote (the error line); ``file``/``line``
    the innermost frame in the user's script (``line`` 0 when unknown); ``details`` the
    key traceback lines for reports; ``via`` names a category that led here (e.g. a CUDA
    assert rerun on CPU); ``facts`` what the check that found it measured, as ``(name,
    value)`` pairs (the API check before the first run: the keyword the installed callable
    accepts instead, the configuration class a trainer keyword moved to, the parameters an
    overriding method lacks), read with :meth:`fact`.
    """

    category: str
    evidence: str
    file: str = ""
    line: int = 0
    line_text: str = ""
    details: tuple[str, ...] = ()
    via: str = ""
    hint: str = ""
    causes: tuple[str, ...] = ()
    #: Short class name of the exception (``NameError``); "" for symptoms and timeouts.
    error_type: str = ""
    #: The exception diagnosed, with the facts of its frames (``ExceptionInfo.facts``), for
    #: the recipes that fix the value the facts name (``None``: a symptom, a timeout).
    failure: ExceptionInfo | None = field(default=None, compare=False, repr=False)
    #: The whole message of the exception the category matched (all its lines, at most
    #: 4000 characters; ``evidence`` quotes one line): the advice a library's message gives
    #: often follows its first sentence. "" for symptoms and timeouts.
    message: str = ""
    facts: tuple[tuple[str, str], ...] = ()

    def fact(self, name: str) -> str:
        """The value of fact ``name`` ("" when the check did not measure it)."""
        return next((value for key, value in self.facts if key == name), "")

    def same_fault(self, other: Diagnosis) -> bool:
        """True when ``other`` is this fault again at the same place: the same category
        raised from the same script line, by number or by text (a fix may edit the very
        line it fails on, or add an import above it). Symptoms have no line (0): the same
        category is the same fault. A call that now rejects another keyword argument
        ("unexpected keyword argument 'beta'" after 'tokenizer') is a new fault: the fix
        took the call past the first one; so is another callable's rejection
        ("LossPrinter.on_step_end() got an unexpected keyword argument 'model'" after
        "LossPrinter.on_log() ..."): the library raises both from its own frames, so both
        point at the same script line (``trainer.train()``)."""
        if self.category != other.category:
            return False
        for pattern in (_KEYWORD, _CALLABLE):
            named = [pattern.search(d.evidence) for d in (self, other)]
            if named[0] and named[1] and named[0].group(1) != named[1].group(1):
                return False
        same_text = bool(self.line_text.strip()) and self.line_text.strip() == \
            other.line_text.strip()
        return self.line == other.line or same_text


#: The keyword a call rejected, in Python's TypeError.
_KEYWORD = re.compile(r"unexpected keyword argument '(\w+)'")
#: The callable Python's TypeError names for a call it rejects (``A.f() got ...``, ``f()
#: takes 3 positional arguments but 4 were given``, ``f() missing 1 required ...``).
_CALLABLE = re.compile(r"([\w.]+)\(\) (?:got an unexpected keyword|got multiple values|"
                       r"takes |missing \d)")


class RecipeStatus(str, enum.Enum):
    """What applying a recipe did (``outcome.status`` of every outcome type below)."""

    APPLIED = "applied"
    NOT_APPLICABLE = "not_applicable"
    CRASHED = "crashed"
    NO_RECIPE = "no_recipe"


@dataclass(frozen=True)
class Applied:
    """A recipe changed the code: the new ``source``, a one-line ``summary`` and the
    1-based ``line`` of its first edit (0: unknown)."""

    source: str
    summary: str
    line: int = 0
    #: The candidate fixes the recipe could make here, best first (their one-line labels;
    #: empty: one way only), and which of them this source is
    #: (:attr:`RecipeContext.choice`). Several candidates are tried before one is kept
    #: (:mod:`autofix.loop.candidates`).
    options: tuple[str, ...] = ()
    choice: int = 0
    status: ClassVar[RecipeStatus] = RecipeStatus.APPLIED

    @property
    def reason(self) -> str:
        return ""


@dataclass(frozen=True)
class NotApplicable:
    """A recipe declined: the code does not have the shape it fixes (``reason`` says
    what is missing), or the script does not parse. ``precheck``: declined by
    :meth:`~autofix.toolkit.recipe.Recipe.precheck` (the script never mentions a word the
    recipe needs), a reason worth less than one from looking at the code."""

    reason: str
    recipe: str = ""
    precheck: bool = False
    status: ClassVar[RecipeStatus] = RecipeStatus.NOT_APPLICABLE
    source: ClassVar[str] = ""


@dataclass(frozen=True)
class RecipeCrashed:
    """A recipe raised, or produced code that does not parse: a bug in the recipe, never
    committed, reported as a warning; the session goes on with the next recipe.
    ``traceback`` is the formatted traceback (empty for unparsable output)."""

    recipe: str
    error: str
    traceback: str = ""
    status: ClassVar[RecipeStatus] = RecipeStatus.CRASHED
    source: ClassVar[str] = ""

    @property
    def reason(self) -> str:
        return f"recipe {self.recipe} crashed: {self.error}"


@dataclass(frozen=True)
class NoRecipe:
    """No recipe is registered for the diagnosis' category (or any of its causes)."""

    category: str
    reason: str
    status: ClassVar[RecipeStatus] = RecipeStatus.NO_RECIPE
    source: ClassVar[str] = ""


#: What applying one recipe gives (``autofix.toolkit.recipe.apply_recipe``).
RecipeOutcome = Applied | NotApplicable | RecipeCrashed


@dataclass(frozen=True)
class Healthy:
    """The verdict on a run without a fault: ``evidence`` (steps and losses, else the
    last output line) and ``proven``: the loss got clearly under the chance level within
    the budget (``LossMonitor.clearly_learning``), the proof a symptom fix must give."""

    evidence: str
    proven: bool = False


@dataclass(frozen=True)
class RecipeContext:
    """What a recipe may use: the diagnosis, the target environment and the probe's facts.

    ``versions`` maps distribution names (``transformers``, ``torch``...) to the versions
    installed in the interpreter that runs the script (``--python``), not autofix's own.
    """

    diagnosis: Diagnosis
    versions: dict[str, str] = field(default_factory=dict)
    trainers: tuple[TrainerFacts, ...] = ()
    script: Path = Path("script.py")
    datasets: tuple[DatasetFacts, ...] = ()
    keras: tuple[KerasFacts, ...] = ()
    #: the arguments the script runs with (``autofix SCRIPT -- ARGS``)
    args: tuple[str, ...] = ()
    #: the run's measured facts (:attr:`ProbeReport.facts`: parameter counts, and under
    #: ``"lm"`` what the language-model checks measured: module names, lengths, tokens)
    facts: Mapping[str, Any] = field(default_factory=dict)
    #: which of the recipe's candidate fixes to make (0: the best; see
    #: :attr:`Applied.options`)
    choice: int = 0


@dataclass
class RunRecord:
    """One line of the report: run number, how it ended, its diagnosis, seconds."""

    n: int
    outcome: str
    category: str
    evidence: str
    seconds: float
    recipe: str = ""
    commit: str = ""
    #: (step, loss) per optimizer step the probe saw (loss ``None``: not reported).
    steps: list[tuple[int, float | None]] = field(default_factory=list)
    num_classes: int | None = None  # the model's classes (chance loss ln C), if known
    #: The chance level the run was judged against (nats) and how it is named ("ln 3",
    #: "H"); ``None`` when it has none.
    chance: float | None = None
    chance_label: str = ""
    symptom_step: int = 0  # step where a training symptom was confirmed (0: none)
    max_steps: int = 0  # the step budget of this run (0: none, --full)
    note: str = ""  # why the run was made ("rerun on CPU ...")
    #: The last evaluation the script ran in this run: its step and {metric: value}.
    eval_step: int = 0
    metrics: dict[str, float] = field(default_factory=dict)
    #: What the run reached besides training (:class:`Phase`), and the script's own length
    #: in optimizer steps (0: unknown), so a report says what its verdict covers.
    phases: list[Phase] = field(default_factory=list)
    total_steps: int = 0
    #: Every fix commit made after this run, in the order of ``recipe``'s ids (``commit``
    #: is the last of them).
    commits: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class CandidateRecord:
    """One candidate fix tried before a fix was kept (:mod:`autofix.loop.candidates`): its
    ``label``, the ``run`` that tried it, and whether it was ``kept``."""

    label: str
    run: int
    kept: bool


@dataclass
class FixRecord:
    """One committed fix."""

    category: str
    recipe: str
    commit: str
    file: str
    line: int
    summary: str = ""
    run: int = 0  # the run whose diagnosis it fixes
    diff: str = ""  # unified diff of the script, before -> after this fix
    evidence: str = ""  # the error line the fix answers (run 0: found before the first run)
    #: the candidates run before this one was kept, best first, the kept one last; empty
    #: when the recipe offered one way only (nothing was tried beyond the verifying run)
    candidates: tuple[CandidateRecord, ...] = ()


@dataclass(frozen=True)
class DroppedFix:
    """A fix commit removed from the branch because the next run judged it: the same
    fault again, a new error at a line it changed, or a symptom fix that did not prove
    itself."""

    commit: str
    recipe: str
    category: str
    reason: str


@dataclass(frozen=True)
class DirtyFile:
    """A file of the user's working tree that differs from HEAD: its path in the
    repository (POSIX) and how (``modified``: in the work tree or the index; ``untracked``;
    ``deleted``)."""

    path: str
    state: str


@dataclass(frozen=True)
class MergeAdvice:
    """The commands that bring a fix branch into the user's checkout as the working tree
    is now. ``merge``: the command line that merges it (``git merge BRANCH``, or with the
    uncommitted files stashed around it); ``take``: the command that takes the branch's
    files without its history (``git checkout BRANCH -- FILES``), "" when a plain merge
    works; ``blocking``: the uncommitted files a plain ``git merge`` would refuse to
    overwrite (the branch holds them: a snapshot of the user's edits, then the fixes);
    ``edited_since``: those of them the user changed after autofix snapshotted them (then
    only committing first and merging keeps both)."""

    merge: str
    take: str = ""
    blocking: tuple[str, ...] = ()
    edited_since: tuple[str, ...] = ()


class Status(str, enum.Enum):
    """How a whole session ended (the report's ``status``)."""

    FIXED = "fixed"
    CLEAN = "clean"
    #: The script runs and trains, but a finding stands (``findings``) that no fix cleared.
    FINDINGS = "findings"
    GAVE_UP = "gave_up"
    ERROR = "error"


@dataclass
class SessionResult:
    """What ``autofix`` did to one script: the report, plus why it stopped."""

    status: Status
    branch: str
    reason: str
    runs: list[RunRecord] = field(default_factory=list)
    fixes: list[FixRecord] = field(default_factory=list)
    interrupted: bool = False
    last_diagnosis: Diagnosis | None = None
    skipped: list[str] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)  # the target environment's
    base: str = ""  # the commit the branch's changes are measured from
    diff_stat: str = ""  # ``git diff --stat`` of the branch against ``base``
    dry_run: bool = False  # nothing was written: the fixes are only shown
    earlier_fixes: int = 0  # autofix commits already on a --resume'd branch
    findings: list[Finding] = field(default_factory=list)  # from the last (healthy) run
    #: Things a person should know that did not stop the session: a recipe that crashed
    #: (a bug in autofix, with its traceback log), a probe that failed in the child.
    warnings: list[str] = field(default_factory=list)
    #: Fix commits taken back off the branch, each with why (``DroppedFix``).
    dropped: list[DroppedFix] = field(default_factory=list)
    #: The last run took at least one optimizer step (``fixed``/``clean`` say "trains"
    #: only then; a script that ran to its end without training says so).
    trained: bool = False
    #: The command line the session was started with (``autofix fix train.py ...``).
    command: str = ""
    #: Wall-clock seconds of the whole session.
    seconds: float = 0.0

    @property
    def mergeable(self) -> bool:
        """True when the branch holds fixes a person may merge: the session ended fixed
        (every fix moved the script forward and the last run trains). A gave-up or
        interrupted session never suggests merging."""
        return self.status is Status.FIXED and bool(self.fixes) and not self.interrupted

    def to_json(self) -> dict[str, Any]:
        """The ``--report`` JSON document (shape fixed by issue 2)."""
        return {
            "status": self.status.value,
            "branch": self.branch if self.fixes else None,
            "reason": self.reason,
            "interrupted": self.interrupted,
            "skipped": self.skipped,
            "warnings": self.warnings,
            "dropped": [
                {"commit": d.commit, "recipe": d.recipe, "category": d.category,
                 "reason": d.reason}
                for d in self.dropped
            ],
            "findings": [{"kind": f.kind, "step": f.step, "evidence": f.evidence}
                         for f in self.findings],
            "runs": [
                {
                    "n": r.n,
                    "outcome": r.outcome,
                    "category": r.category,
                    "evidence": r.evidence,
                    "seconds": round(r.seconds, 2),
                }
                for r in self.runs
            ],
            "fixes": [
                {
                    "category": f.category,
                    "recipe": f.recipe,
                    "commit": f.commit,
                    "file": f.file,
                    "line": f.line,
                }
                for f in self.fixes
            ],
        }
