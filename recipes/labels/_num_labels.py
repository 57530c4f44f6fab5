"""Setting a classification head's size where the script decides it, shared by the recipes
that give a head the width its labels need (``label-out-of-range``,
``multi-label-num-labels``, ``binary-two-outputs``; not a recipe itself: the registry
skips modules whose name starts with ``_``).

The head's width is decided by ``num_labels`` on the call that makes the model's config:
``*ForSequenceClassification.from_pretrained(ckpt, num_labels=N)`` (also
``*ForTokenClassification``), or, when the model is given a config
(``from_pretrained(ckpt, config=config)``, ``from_config(config)``,
``BertForSequenceClassification(config)``), the call that makes that config
(``AutoConfig.from_pretrained(..., num_labels=N)``, ``BertConfig(num_labels=N)``) or a
``config.num_labels = N`` after it. That is where the value is changed (run_glue's
``AutoConfig.from_pretrained(..., num_labels=num_labels)``: the config call, never a
``num_labels=`` next to ``config=config``), and the value itself is changed at its source:
a module constant (``NUM_LABELS = 2``), a dataclass or class field default (also
``field(default=2)``), an argparse default, a dict literal entry, a parameter default or
the argument at the call site. Where the keyword is missing, or is a literal at the call,
and a class count is in scope there (a variable named like one in any case: a parameter
``num_labels`` of ``build_model(num_labels)``, run_glue's ``num_labels = len(label_list)``,
a constant ``NUM_CLASSES = 2``; else a config value read in the module, ``cfg.num_labels``,
``CONFIG["num_labels"]``), that count is passed and, when it traces to a wrong literal, the
literal is set where it is defined; otherwise the number. A value given on the command
line is reported with the argument to use instead; a computed value (``len(names)``) is
reported, never overwritten with a literal.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.categories.failure import (
    Failure,
    head_at_failure,
    labels_at_loss,
    user_values_of_kind,
)
from autofix.toolkit import NotApplicable, code, keyword
from autofix.toolkit.patterns import CLASSIFIER, MODEL_CONFIG
from autofix.toolkit.scope import (
    PlannedEdits,
    append_kw,
    replace_kw,
    replace_with,
    string_value,
)
from autofix.toolkit.sources import CommandLine, Source, literal_source, name_source
from autofix.toolkit.values import Values
from autofix.types import RecipeContext

#: Names a variable holding the number of classes goes by (to pass it where it is in scope).
COUNT_NAMES = ("num_labels", "num_classes", "n_labels", "n_classes", "nb_labels",
               "number_of_labels")

Found = tuple[cst.Integer, str] | str


def _is_integer(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Integer)


#: At most this many distinct values for a data frame column to count as class ids (an id
#: or a row index column is not a label column).
MAX_CLASSES = 100


def data_num_labels(rc: RecipeContext) -> int | None:
    """The number of classes in the training data the probe saw (``None``: it saw none).

    Raises :class:`NotApplicable` when the labels are not integer class ids, or when they
    start at 1 (shift them instead)."""
    candidates = [t.dataset("train") for t in reversed(rc.trainers)]
    candidates += [d for d in rc.datasets if d.role in ("to_tf_dataset", "dataloader")]
    for train in candidates:
        if train is None or not train.label_column:
            continue
        if train.label_classes:
            return train.label_classes
        if train.label_kind not in ("int", "int-list") or train.label_max is None \
                or train.label_min is None:
            raise NotApplicable(f"labels in column {train.label_column!r} are not class ids "
                                f"({train.label_kind or 'unknown kind'})")
        if train.label_min >= 1:
            raise NotApplicable(f"labels run from {train.label_min:g} to {train.label_max:g}: "
                                "they start at 1 and need shifting to 0, not a bigger head")
        if train.label_min < 0:
            raise NotApplicable(f"negative label {train.label_min:g} in the training data")
        return int(train.label_max) + 1
    return None


def failure_num_labels(rc: RecipeContext) -> int | None:
    """The class count the facts at the failure show (``None``: none): the largest target
    the loss read + 1, or the range of the one integer column of a data frame in the user's
    frames that holds all of the batch's targets (when several such columns disagree, the
    batch's own count)."""
    if rc.diagnosis.failure is None:
        return None
    failure = Failure(rc.diagnosis.failure)
    at = labels_at_loss(failure)
    if at is None or at.max is None or at.min is None or at.min < 0 or at.negatives:
        return None
    high = int(at.max)
    seen = set(at.target.get("distinct") or [high])
    ranges = set()
    for _, frame in user_values_of_kind(failure, "dataframe"):
        for column in (frame.get("int_columns") or {}).values():
            low, top, count = column.get("min"), column.get("max"), column.get("n_distinct")
            if isinstance(low, int) and isinstance(top, int) and low >= 0 and top >= high \
                    and isinstance(count, int) and count <= MAX_CLASSES \
                    and all(low <= v <= top for v in seen):
                ranges.add(top)
    return (ranges.pop() if len(ranges) == 1 else high) + 1


def measured_num_labels(rc: RecipeContext) -> int:
    """The number of classes: the largest count of :func:`data_num_labels` and
    :func:`failure_num_labels`. Raises :class:`NotApplicable` when there is none."""
    counts = [n for n in (data_num_labels(rc), failure_num_labels(rc)) if n]
    if not counts:
        raise NotApplicable("the probe saw no training dataset with a label column to count "
                            "classes (Trainer's train_dataset, a DataLoader's or to_tf_dataset's "
                            "source) and no labels at the failure")
    return max(counts)


class HeadSize(PlannedEdits):
    """Sets ``num_labels`` (and, for :meth:`problem_type`, ``problem_type``) where the
    failing model's head is decided (module docstring). Subclasses give :meth:`wanted`."""

    abstract = True
    nothing_to_do = "no *ForSequenceClassification / *ForTokenClassification model made here"

    def wanted(self) -> int:
        """The number of outputs the head needs; raises :class:`NotApplicable`."""
        raise NotImplementedError

    def problem_type(self) -> str | None:
        """A ``problem_type`` the head needs (``None``: leave it as it is)."""
        return None

    def head_kind(self) -> str:
        """``TokenClassification`` or ``SequenceClassification``: the kind of the model that
        failed (the facts at the failure, else the Trainer's model), "" when unknown."""
        classes = []
        if self.rc.diagnosis.failure is not None:
            head = head_at_failure(Failure(self.rc.diagnosis.failure))
            if head is not None:
                classes.append(head.model_class)
        classes += [t.model_class for t in reversed(self.rc.trainers)]
        classes += [k.model_class for k in reversed(self.rc.keras)]
        for cls in classes:
            for kind in ("TokenClassification", "SequenceClassification"):
                if cls.endswith("For" + kind):
                    return kind
        return ""

    # -- planning ------------------------------------------------------------------------

    def prepare(self, tree: cst.Module) -> None:
        self.values = Values(self)
        self.num_labels = self.wanted()
        self.sources: list[str] = []
        self.done: set[cst.CSTNode] = set()
        kind = self.head_kind()
        places: list[cst.Call] = []
        for call in self.program.calls:
            if not self.is_qualified(call.func, CLASSIFIER):
                continue
            if kind and not any("For" + kind in name for name in self.qualified(call.func)):
                continue  # another model than the one that failed (a tagger next to it)
            places += self._places(call)
        if not places:
            raise NotApplicable(self.reason or self.nothing_to_do)
        for place in dict.fromkeys(places):
            self._set_count(place)
            problem = self.problem_type()
            if problem is not None:
                self._set_problem(place, problem)

    def _places(self, call: cst.Call) -> list[cst.Call]:
        """The calls that decide the head of the model ``call`` makes."""
        func = call.func
        method = func.attr.value if isinstance(func, cst.Attribute) else ""
        config = keyword(call, "config")
        if config is None and method != "from_pretrained":
            config = next((a for a in call.args if a.keyword is None), None)
        if config is None:
            return [call]
        found = [v for v in self.values.origins(config.value)
                 if isinstance(v, cst.Call) and self.is_qualified(v.func, MODEL_CONFIG)]
        if not found:
            self.reason = (f"the model's config {code(config.value)[:60]} is not made by a "
                           "config call autofix can follow")
        return found

    def _assigned_attribute(self, call: cst.Call, attr: str) -> cst.Assign | None:
        """``<name>.<attr> = value`` in the module, ``<name>`` bound to ``call``'s result."""
        parent = self.program.parent(call)
        if not isinstance(parent, cst.Assign) or len(parent.targets) != 1 or \
                not isinstance(parent.targets[0].target, cst.Name):
            return None
        name = parent.targets[0].target.value
        for node in m.findall(self.program.tree, m.Assign(targets=[m.AssignTarget(
                target=m.Attribute(value=m.Name(name), attr=m.Name(attr)))])):
            assert isinstance(node, cst.Assign)
            return node
        return None

    def _count_in_scope(self, at: cst.CSTNode) -> cst.BaseExpression | None:
        """A class count in scope at ``at`` (``None`` when none): a variable named like one
        in any case (``num_labels``, ``NUM_CLASSES``), innermost scope first, then a config
        value (``cfg.num_labels``, ``CONFIG["num_labels"]``) read elsewhere in the module
        from a name bound here. When its value traces to a literal other than the count,
        that literal is changed where it is defined; a computed value (``len(names)``) is
        taken as it is."""
        for name in self.program.visible_names(at):
            if name.lower() not in COUNT_NAMES or not self.program.resolves(name, at):
                continue
            values = [v for t in self.program.resolve(name, at)
                      for v in self._values_of_target(t)]
            if not any(isinstance(v, cst.Integer) and int(v.evaluated_value) != self.num_labels
                       for v in values):
                return cst.Name(name)
            if self._change_at_source(cst.Name(name), at):
                return cst.Name(name)
        for expr in self._config_values(at):
            if self._change_at_source(expr, at):
                return expr.deep_clone()
        return None

    def _config_values(self, at: cst.CSTNode) -> list[cst.BaseExpression]:
        """``X.<count>`` and ``X["<count>"]`` read in the module whose ``X`` is bound at
        ``at`` (``self`` left out), in source order, each text once."""
        found: dict[str, cst.BaseExpression] = {}
        for node in m.findall(self.program.tree, m.Attribute(value=m.Name()) | m.Subscript(
                value=m.Name())):
            assert isinstance(node, (cst.Attribute, cst.Subscript))
            assert isinstance(node.value, cst.Name)
            if isinstance(node, cst.Attribute):
                key = node.attr.value
            elif len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
                key = string_value(node.slice[0].slice.value) or ""
            else:
                continue
            root = node.value.value
            if key.lower() in COUNT_NAMES and root != "self" and \
                    self.program.resolves(root, at):
                found.setdefault(code(node), node)
        return list(found.values())

    def _change_at_source(self, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """Trace ``expr`` (as read at ``at``) to the literal it comes from and plan that
        literal's change to the count; False when it does not trace to one literal."""
        try:
            found = self.source(expr) if not isinstance(expr, cst.Name) else \
                self._from_name(expr.value, at)
        except NotApplicable:
            return False
        if isinstance(found, str):
            return False
        self._change_literal(*found, at_use=False)
        return True

    def _from_name(self, name: str, at: cst.CSTNode) -> Found:
        return self._found(name_source(self.program, name, at, self.rc.args, "num_labels",
                                       _is_integer))

    def _values_of_target(self, target: cst.CSTNode) -> list[cst.CSTNode]:
        return self.values.bound(target) or [target]

    def _set_count(self, call: cst.Call) -> None:
        value = cst.Integer(str(self.num_labels))
        # ``config.num_labels = N`` before the model is built sizes its head;
        # ``model.num_labels = N`` after it is built changes no layer
        is_config = self.is_qualified(call.func, MODEL_CONFIG)
        assigned = self._assigned_attribute(call, "num_labels") if is_config else None
        if assigned is not None:
            self._follow(assigned.value, None)
            return
        existing = keyword(call, "num_labels")
        if existing is None:
            new: cst.BaseExpression = self._count_in_scope(call) or value
            self.plan_edit(call, append_kw("num_labels", new), f"num_labels={code(new)}")
            return
        self._follow(existing.value, call)

    def _follow(self, expr: cst.BaseExpression, call: cst.Call | None) -> None:
        found = self.source(expr)
        if isinstance(found, str):
            raise NotApplicable(f"{found}; set it to {self.num_labels} there")
        literal, where = found
        if literal in self.done:
            return
        if int(literal.evaluated_value) == self.num_labels:
            self.done.add(literal)
            self.reason = f"num_labels is already {self.num_labels}"
            return
        at_use = literal is expr
        count = self._count_in_scope(call) if at_use and call is not None else None
        if count is not None:  # a count defined in scope: set there, passed here
            self.done.add(literal)
            self.plan_edit(call, replace_kw("num_labels", count),  # type: ignore[arg-type]
                           f"num_labels={literal.value} -> {code(count)}")
            return
        self._change_literal(literal, where, at_use=at_use)

    def _change_literal(self, literal: cst.Integer, where: str, *, at_use: bool) -> None:
        """Plan ``literal`` (found at ``where``) -> the count, once; a literal away from the
        call is listed in :attr:`sources` for the summary."""
        if literal in self.done:
            return
        self.done.add(literal)
        if int(literal.evaluated_value) == self.num_labels:
            return
        line = self.program.line(literal)
        description = (f"num_labels={literal.value} -> {self.num_labels}" if at_use else
                       f"{where} (line {line}): {literal.value} -> {self.num_labels}")
        if not at_use:
            self.sources.append(f"{where}, line {line}")
        self.plan_edit(literal, replace_with(cst.Integer(str(self.num_labels))), description)

    def _set_problem(self, call: cst.Call, problem: str) -> None:
        if self._assigned_attribute(call, "problem_type") is not None:
            return
        existing = keyword(call, "problem_type")
        value = cst.SimpleString(f'"{problem}"')
        if existing is None:
            self.plan_edit(call, append_kw("problem_type", value), f'problem_type="{problem}"')
        elif string_value(existing.value) != problem:
            self.plan_edit(call, replace_kw("problem_type", value), f'problem_type="{problem}"')

    # -- following a value to its literal -------------------------------------------------

    def source(self, expr: cst.BaseExpression, depth: int = 0) -> Found:
        """The integer literal ``expr``'s value comes from and where it is
        (:func:`autofix.toolkit.sources.literal_source`: a module constant, a class field
        default, an argparse default, a dict entry, a parameter's default or argument); a
        reason string when it cannot be followed to one. Raises :class:`NotApplicable` when
        the script's command line sets it (the flag to pass instead is the fix)."""
        return self._found(literal_source(self.program, expr, self.rc.args, "num_labels",
                                          _is_integer))

    def _found(self, found: Source) -> Found:
        if isinstance(found, CommandLine):
            raise NotApplicable(
                f"num_labels comes from the command line ({found.flag} {found.value}): run "
                f"the script with {found.flag} {self.num_labels}")
        if isinstance(found, str):
            return found
        return cst.ensure_type(found.node, cst.Integer), found.where or "num_labels"

    def where(self) -> str:
        """`` (changed at its source: ...)`` for the summary, "" when changed at the call."""
        return f" (changed at its source: {'; '.join(self.sources)})" if self.sources else ""
