"""Silent faults of a hand loop read from the script's source: it trains and evaluates
without an error, and its numbers are wrong. The readers measure; the categories word what
they found (``Category.source_findings``, ``Category.source_diagnoses``), as the child's
probes measure and the categories word the run's facts.

- ``shuffled-evaluations`` (:func:`shuffled_evaluations`): a ``for`` loop (or a
  comprehension) over a ``torch.utils.data.DataLoader`` built with ``shuffle=True`` that
  takes no optimizer step and calls no ``backward()`` (an evaluation), collects its outputs
  (``append``/``extend``/``+=``, or the comprehension's list) and never reads the batches'
  labels (the second element of the loop's target unused or ``_``, a one-element target, a
  batch read only at index 0 or at keys without ``label``). Its predictions come in the
  loader's shuffled order and are compared with labels kept outside the loop, in the
  dataset's stored order: the accuracy falls to chance. The loader's construction is
  reached through names, parameters filled at call sites and ``self.x``
  (:meth:`autofix.toolkit.scope.Program.values`).
- ``stats-before-split`` (:func:`stats_before_split`): normalisation statistics of whole
  rows (``x.mean()``/``std()``/``var()``/``min()``/``max()`` subtracted from or dividing
  the same rows, or a ``sklearn.preprocessing`` scaler's ``fit``/``fit_transform``) of a
  value that a later line splits into train and test rows (``train_test_split``,
  ``random_split``, a slice ``x[:n]``/``x[n:]``, rows indexed by a ``randperm``/
  ``permutation``): the test rows' statistics leak into training.
- ``logits-metrics`` (:func:`autofix.toolkit.logits_scan.logits_metrics`): a label metric
  given a model output's raw logits.

:func:`source_facts` gives the readings of a source text, each reader run when its reading
is first asked for; ``recipes/evidence/eval_loader_no_shuffle.py`` fixes the first through
:func:`shuffled_evaluations`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
import libcst.matchers as m

from autofix.toolkit.apply import transform
from autofix.toolkit.edits import code
from autofix.toolkit.logits_scan import logits_metrics
from autofix.toolkit.parsed import find, parse_source
from autofix.toolkit.patterns import DATALOADER
from autofix.toolkit.recipe import NotApplicable
from autofix.toolkit.scope import PlannedEdits, Program
from autofix.types import Diagnosis, RecipeContext, SourceFacts

#: Calls in a loop body that make it a training loop, not an evaluation.
TRAINING_CALLS = frozenset({"backward", "step"})
#: Methods that collect a loop's outputs.
COLLECTING = frozenset({"append", "extend"})
#: Row statistics a normalisation subtracts or divides by.
STATISTICS = frozenset({"mean", "std", "var", "min", "max", "amin", "amax", "nanmean",
                        "nanstd"})
#: A scikit-learn scaler (or any transformer of ``sklearn.preprocessing``).
SKLEARN_PREPROCESSING = r"sklearn\.preprocessing(\.[\w.]+)?\.\w+"
#: Calls that split rows into train and test parts.
SPLITS = r"(sklearn\.model_selection(\._split)?\.train_test_split|" \
         r"torch\.utils\.data(\.dataset)?\.random_split)"
#: Calls that draw a permutation of row indices.
PERMUTATIONS = frozenset({"randperm", "permutation"})


@dataclass(frozen=True)
class ShuffledEval:
    """An evaluation loop over a shuffling loader: the loop (``For`` or ``CompFor``), its
    line, the loader expression it iterates and the ``DataLoader(...)`` calls that build
    it with ``shuffle=True`` (and their lines)."""

    loop: cst.CSTNode
    line: int
    loader: cst.BaseExpression
    constructions: tuple[cst.Call, ...]
    built_at: tuple[int, ...]


@dataclass(frozen=True)
class StatsLeak:
    """Statistics of all rows (``statistic``, the call, at ``line``, over ``rows``) and the
    ``split`` of those rows (described as ``how``, at ``split_line``: after the statistic,
    or before it when the statistic reads the whole value a split already cut); the nodes
    (``call``, ``rows_node``, ``split``) for the recipe that moves the statistic."""

    statistic: str
    line: int
    rows: str
    how: str
    split_line: int
    call: cst.Call | None = field(default=None, compare=False, repr=False)
    rows_node: cst.BaseExpression | None = field(default=None, compare=False, repr=False)
    split: cst.CSTNode | None = field(default=None, compare=False, repr=False)


def _method(call: cst.Call) -> str:
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else ""


def _calls(node: cst.CSTNode) -> Iterator[cst.Call]:
    for found in find(node, m.Call()):
        assert isinstance(found, cst.Call)
        yield found


def _names(node: cst.CSTNode) -> set[str]:
    return {n.value for n in find(node, m.Name()) if isinstance(n, cst.Name)}


def _shuffles(recipe: PlannedEdits, call: cst.Call) -> bool:
    """``call`` is ``DataLoader(..., shuffle=True)``."""
    if not recipe.is_qualified(call.func, DATALOADER):
        return False
    return any(a.keyword is not None and a.keyword.value == "shuffle"
               and m.matches(a.value, m.Name("True")) for a in call.args)


def _labels_unused(target: cst.BaseExpression, body: cst.CSTNode) -> bool:
    """The batch's label element is never read in ``body``: a one-element target, a
    second element that is ``_`` or unused, or a batch name read only by subscripts that
    are neither index 1 nor a key holding ``label``."""
    if isinstance(target, (cst.Tuple, cst.List)):
        elements = target.elements
        if len(elements) == 1:
            return True
        second = elements[1].value
        if not isinstance(second, cst.Name):
            return False
        return second.value == "_" or second.value not in _names(body)
    if not isinstance(target, cst.Name):
        return False
    uses = [n for n in find(body, m.Name(target.value))]
    subscripts = [s for s in find(body, m.Subscript(value=m.Name(target.value)))
                  if isinstance(s, cst.Subscript)]
    if not uses or len(subscripts) != len(uses):
        return False  # the batch goes somewhere whole (model(**batch)): labels may be read
    for sub in subscripts:
        index = sub.slice[0].slice if len(sub.slice) == 1 else None
        if not isinstance(index, cst.Index):
            return False
        if m.matches(index.value, m.Integer("1")) or (
                isinstance(index.value, cst.SimpleString)
                and "label" in index.value.evaluated_value.lower()):
            return False
    return True


def _collects(loop: cst.CSTNode, body: cst.CSTNode) -> bool:
    if isinstance(loop, cst.CompFor):
        return True
    return any(_method(c) in COLLECTING for c in _calls(body)) or \
        bool(find(body, m.AugAssign(operator=m.AddAssign())))


def _loops(tree: cst.Module) -> Iterator[tuple[cst.CSTNode, cst.BaseExpression,
                                               cst.BaseExpression, cst.CSTNode]]:
    """(loop, iterated expression, target, body) of every ``for`` and comprehension."""
    for node in find(tree, m.For()):
        assert isinstance(node, cst.For)
        yield node, node.iter, node.target, node.body
    for comp in find(tree, m.ListComp() | m.GeneratorExp()):
        assert isinstance(comp, (cst.ListComp, cst.GeneratorExp))
        yield comp.for_in, comp.for_in.iter, comp.for_in.target, comp.elt


def shuffled_evaluations(recipe: PlannedEdits) -> list[ShuffledEval]:
    """The evaluation loops of ``recipe.program`` over a loader built with shuffle=True
    whose labels the loop never reads (see the module docstring), in source order."""
    program = recipe.program
    found = []
    for loop, iterated, target, body in _loops(program.tree):
        if any(_method(c) in TRAINING_CALLS for c in _calls(body)):
            continue
        if not _labels_unused(target, body) or not _collects(loop, body):
            continue
        built = tuple(v for v in program.values(iterated)
                      if isinstance(v, cst.Call) and _shuffles(recipe, v))
        if built:
            found.append(ShuffledEval(loop, program.line(loop), iterated, built,
                                      tuple(program.line(c) for c in built)))
    return sorted(found, key=lambda f: f.line)


def _binding_statement(program: Program, node: cst.CSTNode) -> cst.CSTNode | None:
    """The assignment statement (``Assign``/``AnnAssign``/``AugAssign``) holding ``node``."""
    for anc in program.ancestors(node):
        if isinstance(anc, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            return anc
        if isinstance(anc, cst.BaseSmallStatement | cst.BaseCompoundStatement):
            return None
    return None


def _is_split(recipe: PlannedEdits, node: cst.CSTNode) -> str:
    """How ``node`` splits rows ("" when it does not): a split call, a bounded slice of the
    first axis, rows indexed by a permutation."""
    if isinstance(node, cst.Call) and recipe.is_qualified(node.func, SPLITS):
        return code(node.func)
    if isinstance(node, cst.Subscript) and node.slice:
        first = node.slice[0].slice
        if isinstance(first, cst.Slice) and (first.lower is not None or first.upper is not None):
            return "a slice"
        if isinstance(first, cst.Index) and _permuted(recipe, first.value):
            return "a permutation of its rows"
    return ""


def _permuted(recipe: PlannedEdits, expr: cst.BaseExpression) -> bool:
    """``expr`` holds, or is followed to, a ``randperm``/``permutation`` call."""
    program = recipe.program
    for value in [expr, *program.values(expr)]:
        if any(_method(c) in PERMUTATIONS or m.matches(c.func, m.Name("randperm"))
               for c in _calls(value)):
            return True
        if isinstance(value, cst.Subscript) and value.value is not expr:
            if _permuted(recipe, value.value):
                return True
    return False


def _sources(recipe: PlannedEdits, expr: cst.CSTNode, depth: int = 0,
             seen: set[cst.CSTNode] | None = None) -> set[cst.CSTNode]:
    """The bindings and calls ``expr``'s value is computed from: every name in it followed
    to its binding's assignment, and module functions called in it (their statements and
    the arguments they are given), up to a depth of 8."""
    seen = set() if seen is None else seen
    if depth > 8 or expr in seen:
        return set()
    seen.add(expr)
    program = recipe.program
    out: set[cst.CSTNode] = {expr}
    for call in _calls(expr):
        out.add(call)
        func = program.function_called(call)
        if func is not None:
            out |= _sources(recipe, func.body, depth + 1, seen)
    for name in find(expr, m.Name()):
        assert isinstance(name, cst.Name)
        for binding in program.resolve(name.value, name):
            out.add(binding)
            statement = _binding_statement(program, binding)
            if statement is not None:
                out |= _sources(recipe, statement, depth + 1, seen)
            elif isinstance(binding, cst.Param):
                func = program.function_of(binding)
                if func is None:
                    continue
                for site in program.call_sites(func):
                    arg = program.bound(func, site, binding.name.value)
                    if arg is not None:
                        out |= _sources(recipe, arg, depth + 1, seen)
    return out


def _whole_rows(recipe: PlannedEdits, rows: cst.BaseExpression) -> bool:
    """``rows`` is a whole value, not a part already split off: a name none of whose
    sources is a split (a parameter only when its call sites show it)."""
    if not isinstance(rows, cst.Name):
        return False
    program = recipe.program
    bindings = program.resolve(rows.value, rows)
    if not bindings:
        return False
    for binding in bindings:
        if isinstance(binding, cst.Param):
            func = program.function_of(binding)
            sites = program.call_sites(func) if func is not None else []
            args = [program.bound(func, s, binding.name.value) for s in sites] \
                if func is not None else []
            if not args or any(a is None or not _whole_rows(recipe, a) for a in args):
                return False
            continue
        statement = _binding_statement(program, binding)
        if statement is None:
            return False
        if any(_is_split(recipe, n) for n in find(statement, m.Call() | m.Subscript())):
            return False
    return True


def _statistics(recipe: PlannedEdits) -> Iterator[tuple[cst.Call, cst.BaseExpression]]:
    """(call, rows) of each normalisation statistic of whole rows."""
    program = recipe.program
    for call in program.calls:
        func = call.func
        if not isinstance(func, cst.Attribute):
            continue
        name = func.attr.value
        if name in ("fit", "fit_transform") and call.args:
            scaler = [v for v in program.values(func.value)
                      if isinstance(v, cst.Call)
                      and recipe.is_qualified(v.func, SKLEARN_PREPROCESSING)]
            rows = call.args[0].value
            if scaler and _whole_rows(recipe, rows):
                yield call, rows
        elif name in STATISTICS and isinstance(func.value, cst.Name) \
                and _whole_rows(recipe, func.value) and _normalises(program, call, func.value):
            yield call, func.value


def _normalises(program: Program, call: cst.Call, rows: cst.Name) -> bool:
    """The statistic ``call`` of ``rows`` is subtracted from or divides ``rows`` (itself,
    or the names its statement binds) in the function that computes it."""
    statement = _binding_statement(program, call)
    bound = {rows.value} if statement is None else \
        _names(statement.targets[0].target) if isinstance(statement, cst.Assign) and \
        len(statement.targets) == 1 else set()
    holder = program.function_of(call) or program.tree
    for op in find(holder, m.BinaryOperation(operator=m.Subtract() | m.Divide())):
        assert isinstance(op, cst.BinaryOperation)
        left, right = _names(op.left), _names(op.right)
        uses_stat = bool(find(op, m.Call())) and call in set(_calls(op))
        if rows.value in left and (uses_stat or right & (bound - {rows.value})):
            return True
        if right & (bound - {rows.value}) and program.line(op) > program.line(call) \
                and _derived(program, op.left, rows):
            return True  # the statistics of all rows normalise a part split off later
    return False


def _derived(program: Program, expr: cst.BaseExpression, rows: cst.Name) -> bool:
    """A name in ``expr`` is bound from ``rows`` (``X_train`` of ``train_test_split(X)``,
    ``features[train_idx]``): one of its assignments reads ``rows``' binding."""
    bindings = set(program.resolve(rows.value, rows))
    for name in find(expr, m.Name()):
        assert isinstance(name, cst.Name)
        for binding in program.resolve(name.value, name):
            statement = _binding_statement(program, binding)
            if statement is None:
                continue
            for read in find(statement, m.Name(rows.value)):
                if set(program.resolve(rows.value, read)) & bindings:
                    return True
    return False


def _fits_on_split_value(recipe: PlannedEdits, splits: list[cst.CSTNode]
                         ) -> Iterator[tuple[cst.Call, cst.Name, cst.CSTNode]]:
    """(fit call, rows, split) of a scaler fitted, after a split of ``rows``, on an
    expression that reads ``rows`` itself (``StandardScaler().fit(featurize(df.text))``
    after ``train_df, val_df = train_test_split(df)``) in the same function."""
    program = recipe.program
    for call in program.calls:
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in ("fit", "fit_transform")
                and call.args and not isinstance(call.args[0].value, cst.Name)):
            continue
        if not any(isinstance(v, cst.Call) and recipe.is_qualified(v.func, SKLEARN_PREPROCESSING)
                   for v in program.values(func.value)):
            continue
        for name in find(call.args[0].value, m.Name()):
            assert isinstance(name, cst.Name)
            bindings = set(program.resolve(name.value, name))
            for split in splits:
                operand = _operand(split)
                if not isinstance(operand, cst.Name) or operand.value != name.value \
                        or program.line(split) >= program.line(call) \
                        or program.function_of(split) is not program.function_of(call) \
                        or not set(program.resolve(operand.value, operand)) & bindings:
                    continue
                yield call, name, split
                break


def _operand(split: cst.CSTNode) -> cst.BaseExpression | None:
    if isinstance(split, cst.Subscript):
        return split.value
    if isinstance(split, cst.Call) and split.args:
        return split.args[0].value
    return None


def stats_before_split(recipe: PlannedEdits) -> list[StatsLeak]:
    """Statistics of whole rows that a later line splits (see the module docstring): one
    per statistic, with the first split after it; and scalers fitted on the whole value
    after a split of it (:func:`_fits_on_split_value`)."""
    program = recipe.program
    splits = [n for n in find(program.tree, m.Call() | m.Subscript())
              if _is_split(recipe, n)]
    found = []
    for call, whole, cut in _fits_on_split_value(recipe, splits):
        found.append(StatsLeak(code(call), program.line(call), whole.value,
                               _is_split(recipe, cut), program.line(cut), call, whole, cut))
    for call, rows in _statistics(recipe):
        line = program.line(call)
        rows_bindings = set(program.resolve(rows.value, rows)) if isinstance(rows, cst.Name) \
            else set()
        for split in sorted(splits, key=program.line):
            if program.line(split) <= line:
                continue
            operand = split.value if isinstance(split, cst.Subscript) else \
                split.args[0].value if isinstance(split, cst.Call) and split.args else None
            if operand is None:
                continue
            sources = _sources(recipe, operand)
            if call in sources or rows_bindings & sources:
                how = _is_split(recipe, split)
                if code(operand) != code(rows):
                    how += f" (of `{code(operand)}`)"
                found.append(StatsLeak(code(call), line, code(rows), how, program.line(split),
                                       call, rows, split))
                break
    return found


class _Reader(PlannedEdits):
    """Runs the rules on a module with the metadata a recipe gets; edits nothing."""

    abstract = True

    def prepare(self, tree: cst.Module) -> None:
        self.shuffled = shuffled_evaluations(self)
        self.leaks = stats_before_split(self)

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        try:
            return super().transform_module_impl(tree)
        except NotApplicable:  # it changed nothing, as it should: the findings are kept
            return tree


def _loops_and_leaks(source: str) -> dict[str, list[dict[str, Any]]]:
    """The readings ``shuffled-evaluations`` (``line``, ``loader``: its code, ``built_at``:
    the lines of its ``DataLoader(..., shuffle=True)`` calls) and ``stats-before-split``
    (``line``, ``statistic``, ``rows``, ``how``, ``split_line``, ``shown``: the statistic's
    line as written) of ``source``, from one parse; empty when it does not parse."""
    parsed = parse_source(source)
    if parsed.module is None:
        return {SHUFFLED: [], LEAKS: []}
    reader, _ = transform(_Reader, parsed, RecipeContext(Diagnosis(category="", evidence="")))
    assert isinstance(reader, _Reader)
    text = source.splitlines()
    return {
        SHUFFLED: [{"line": ev.line, "loader": code(ev.loader), "built_at": list(ev.built_at)}
                   for ev in reader.shuffled],
        LEAKS: [{"line": leak.line, "statistic": leak.statistic, "rows": leak.rows,
                 "how": leak.how, "split_line": leak.split_line,
                 "shown": text[leak.line - 1].strip() if 0 < leak.line <= len(text) else ""}
                for leak in reader.leaks],
    }


def _logits(source: str) -> dict[str, list[dict[str, Any]]]:
    return {LOGITS: logits_metrics(source)}


#: The reading names: an evaluation loop over a shuffling loader, statistics of all rows
#: before their split, a label metric given raw logits.
SHUFFLED, LEAKS, LOGITS = "shuffled-evaluations", "stats-before-split", "logits-metrics"
#: Each reading's reader (one reader may give several readings from one parse).
READERS: dict[str, Callable[[str], dict[str, list[dict[str, Any]]]]] = {
    SHUFFLED: _loops_and_leaks, LEAKS: _loops_and_leaks, LOGITS: _logits}


class _Readings(Mapping[str, list[dict[str, Any]]]):
    """The readings of one source, each reader run on first use (:func:`source_facts`)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.read: dict[str, list[dict[str, Any]]] = {}

    def __getitem__(self, name: str) -> list[dict[str, Any]]:
        if name not in self.read:
            self.read.update(READERS[name](self.source))  # raises KeyError for no reader
        return self.read[name]

    def __iter__(self) -> Iterator[str]:
        return iter(READERS)

    def __len__(self) -> int:
        return len(READERS)


def source_facts(source: str) -> SourceFacts:
    """What the readers find in ``source`` (a script's program), by reading name
    (:data:`READERS`): each reader runs when one of its readings is first asked for, so
    a hook that reads nothing costs no parse. Records are JSON-like (ints, strings)."""
    return _Readings(source)
