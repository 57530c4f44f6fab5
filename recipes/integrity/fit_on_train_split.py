"""fit-on-train-split: statistics, scalers and encoders fitted on the training rows only.

Normalisation statistics taken from every row before the rows are split into training and
test (``X = StandardScaler().fit_transform(X)`` then ``train_test_split(X, y)``; ``mean,
std = X.mean(0), X.std(0)`` before the split; a scaler fitted on the whole table after
it) leak the test rows into training and into every number measured on them (the
``stats-before-split`` source finding, :func:`autofix.toolkit.source_findings.
stats_before_split`). scikit-learn's guide ("Common pitfalls: data leakage") and every
course fit the statistics on the training split, then apply them to every split:

- a statement that only computes the statistics (``mean, std = X.mean(axis=0), ...``,
  ``scaler = StandardScaler().fit(X)``) moves after the split, fitted on the training
  part (``X_train`` of ``train_test_split(X, ...)``, ``features[train_idx]``, ``x[:400]``);
- rows normalised in place before the split (``X = StandardScaler().fit_transform(X)``,
  ``x = (x - x.mean(dim=0)) / x.std(dim=0)``): the line goes, and after the split the
  statistics are taken from the training part and applied to each part
  (``scaler.fit_transform(X_train)``, ``scaler.transform(X_test)``);
- a scaler fitted on the whole value after the split (``.fit(featurize(df.text))`` after
  ``train_df, val_df = train_test_split(df)``): fitted on the training part
  (``train_df``).

Statistics computed inside a helper, or rows split as a dataset object
(``random_split(TensorDataset(...))``), are left to the finding's advice.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, NotApplicable, code, find
from autofix.toolkit.insert import parse_statement
from autofix.toolkit.scope import PlannedEdits, fresh_name, replace_with
from autofix.toolkit.source_findings import SKLEARN_PREPROCESSING, StatsLeak, stats_before_split

_SK = ("import numpy as np\nfrom sklearn.model_selection import train_test_split\n"
       "from sklearn.preprocessing import StandardScaler\nX, y = load()\n")
_SPLIT = "X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)\n"


class _Rename(cst.CSTTransformer):
    """Names ``old`` -> ``new``; calls of :attr:`stats` -> their names."""

    def __init__(self, old: str, new: str, stats: dict[str, str] | None = None) -> None:
        super().__init__()
        self.old, self.new, self.stats = old, new, stats or {}

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call
                   ) -> cst.BaseExpression:
        name = self.stats.get(code(original_node))
        return cst.Name(name) if name else updated_node

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        return cst.Name(self.new) if original_node.value == self.old else updated_node


def _renamed(node: cst.CSTNode, old: str, new: str, stats: dict[str, str] | None = None
             ) -> str:
    renamed = node.visit(_Rename(old, new, stats))
    assert isinstance(renamed, cst.CSTNode)
    return code(renamed).strip()


class FitOnTrainSplit(PlannedEdits):
    id = "fit-on-train-split"
    category = "stats-before-split"
    title = "fit the normalisation statistics on the training split, then apply them to " \
            "every split"
    requires_words = (("mean", "std", "min", "max", "var", "fit", "fit_transform"),)
    nothing_to_do = "no statistics of all rows the recipe can move after the split"

    examples = (
        Example(  # a scaler fitted on all rows in place, then split
            before=_SK + "X = StandardScaler().fit_transform(X)\n" + _SPLIT,
            after=_SK + _SPLIT + "scaler = StandardScaler()\n"
                                 "X_train = scaler.fit_transform(X_train)\n"
                                 "X_test = scaler.transform(X_test)\n",
        ),
        Example(  # statistics bound to names, applied to the parts after the split
            before=_SK + "mean, std = X.mean(axis=0), X.std(axis=0) + 1e-6\n" + _SPLIT +
            "X_train = (X_train - mean) / std\nX_test = (X_test - mean) / std\n",
            after=_SK + _SPLIT + "mean, std = X_train.mean(axis=0), X_train.std(axis=0) + 1e-6\n"
                                 "X_train = (X_train - mean) / std\n"
                                 "X_test = (X_test - mean) / std\n",
        ),
        Example(  # mean/std in place, split by slices
            before="import torch\nx, y = load()\nx = (x - x.mean(dim=0)) / x.std(dim=0)\n"
                   "x_train, y_train, x_test, y_test = x[:400], y[:400], x[400:], y[400:]\n",
            after="import torch\nx, y = load()\n"
                  "x_train, y_train, x_test, y_test = x[:400], y[:400], x[400:], y[400:]\n"
                  "x_mean = x_train.mean(dim=0)\nx_std = x_train.std(dim=0)\n"
                  "x_train = (x_train - x_mean) / x_std\n"
                  "x_test = (x_test - x_mean) / x_std\n",
        ),
        Example(  # a scaler fitted on the whole table after the split
            before=_SK + "def load(df):\n"
                         "    train_df, val_df = train_test_split(df, test_size=60)\n"
                         "    X_train, X_val = feats(train_df), feats(val_df)\n"
                         "    scaler = StandardScaler().fit(feats(df))\n"
                         "    return scaler.transform(X_train), scaler.transform(X_val)\n",
            after=_SK + "def load(df):\n"
                        "    train_df, val_df = train_test_split(df, test_size=60)\n"
                        "    X_train, X_val = feats(train_df), feats(val_df)\n"
                        "    scaler = StandardScaler().fit(feats(train_df))\n"
                        "    return scaler.transform(X_train), scaler.transform(X_val)\n",
        ),
        Example(  # statistics of the training rows already: nothing to change
            before=_SK + _SPLIT + "scaler = StandardScaler().fit(X_train)\n"
                                  "X_train, X_test = scaler.transform(X_train), "
                                  "scaler.transform(X_test)\n",
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        done: set[int] = set()
        for leak in stats_before_split(self):
            if leak.call is None or not isinstance(leak.rows_node, cst.Name) \
                    or leak.split is None or id(leak.split) in done:
                continue
            if self._repair(leak):
                done.add(id(leak.split))
        if not self.edits:
            raise NotApplicable(self.reason or self.nothing_to_do)

    # -- the parts a split makes ----------------------------------------------------------

    def _parts(self, rows: cst.Name, split: cst.CSTNode
               ) -> tuple[list[tuple[str, cst.CSTNode]], str] | None:
        """The names the split binds to parts of ``rows`` with their statements, and the
        training part's name; ``None`` for a split the recipe does not read."""
        program = self.program
        statement = self._statement(split)
        assign = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) \
            and len(statement.body) == 1 else None
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return None
        target = assign.targets[0].target
        if isinstance(split, cst.Call):  # train_test_split(X, y, ...): X_train, X_test, ...
            given = [a.value for a in split.args if a.keyword is None]
            index = next((i for i, a in enumerate(given)
                          if isinstance(a, cst.Name) and a.value == rows.value), None)
            names = [e.value for e in target.elements] if isinstance(target, cst.Tuple) else []
            if index is None or not all(isinstance(n, cst.Name) for n in names) \
                    or len(names) != 2 * len(given):
                return None
            pair = [n.value for n in names[2 * index:2 * index + 2]
                    if isinstance(n, cst.Name)]
            return [(name, statement) for name in pair], pair[0]
        parts: list[tuple[str, cst.CSTNode]] = []
        holder = program.parent(statement)
        body = list(getattr(holder, "body", ()))
        for stmt in body[body.index(statement):] if statement in body else [statement]:
            for name, value in self._pairs(stmt):
                if isinstance(value, cst.Subscript) and m.matches(value.value,
                                                                   m.Name(rows.value)):
                    parts.append((name, stmt))
        if len(parts) < 2:
            return None
        train = next((n for n, _ in parts if "train" in n.lower()), parts[0][0])
        return parts, train

    @staticmethod
    def _pairs(stmt: cst.CSTNode) -> list[tuple[str, cst.BaseExpression]]:
        """(name, value) of ``a = v`` and ``a, b = v, w`` statements."""
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            return []
        assign = stmt.body[0]
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return []
        target, value = assign.targets[0].target, assign.value
        if isinstance(target, cst.Name):
            return [(target.value, value)]
        if isinstance(target, cst.Tuple) and isinstance(value, cst.Tuple) \
                and len(target.elements) == len(value.elements):
            return [(t.value.value, v.value) for t, v in zip(target.elements, value.elements,
                                                              strict=True)
                    if isinstance(t.value, cst.Name)]
        return []

    def _statement(self, node: cst.CSTNode) -> cst.CSTNode:
        for anc in self.program.ancestors(node):
            if isinstance(anc, cst.SimpleStatementLine):
                return anc
        return node

    # -- the repairs ------------------------------------------------------------------

    def _repair(self, leak: StatsLeak) -> bool:
        assert leak.call is not None and isinstance(leak.rows_node, cst.Name) \
            and leak.split is not None
        rows, call, split = leak.rows_node, leak.call, leak.split
        found = self._parts(rows, split)
        if found is None:
            self.reason = self.reason or f"the split at line {leak.split_line} is not a " \
                                         "train_test_split or slices the recipe reads"
            return False
        parts, train = found
        if leak.split_line < leak.line:  # fitted on the whole value after the split
            for name in find(call.args[0].value, m.Name(rows.value)):
                self.plan_edit(name, replace_with(cst.Name(train)),
                               f"{rows.value} -> {train}: fitted on the training rows")
            return True
        statement = self._statement(call)
        assign = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) \
            and len(statement.body) == 1 else None
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 \
                or self.program.function_of(statement) is not self.program.function_of(split) \
                or self.program.parent(statement) is not self.program.parent(parts[-1][1]):
            self.reason = self.reason or "the statistics are not one assignment in the " \
                                         "split's block"
            return False
        bound = {n.value for n in find(assign.targets[0].target, m.Name())
                 if isinstance(n, cst.Name)}
        anchor = parts[-1][1]
        if self._read_between(bound | {rows.value}, statement, self._statement(split)):
            self.reason = self.reason or f"{', '.join(sorted(bound))} is read before the split"
            return False
        if rows.value not in bound:  # statistics only: moved after the split
            text = _renamed(assign, rows.value, train)
            train_stmt = next(s for n, s in parts if n == train)
            self._move(statement, train_stmt, [text])
            return True
        return self._in_place(assign, statement, rows.value, parts, train, anchor)

    def _read_between(self, names: set[str], start: cst.CSTNode, end: cst.CSTNode) -> bool:
        """A statement strictly between ``start`` and ``end`` (same block) reads one of
        ``names``."""
        holder = self.program.parent(start)
        body = list(getattr(holder, "body", ()))
        if start not in body or end not in body:
            return True
        between = body[body.index(start) + 1:body.index(end)]
        return any(find(stmt, m.Name(n)) for stmt in between for n in names)

    def _move(self, statement: cst.CSTNode, after: cst.CSTNode, lines: list[str]) -> None:
        """Remove ``statement`` and put ``lines`` after ``after``, both of one block."""
        holder = self.program.parent(statement)
        body = list(getattr(holder, "body", ()))
        drop, at = body.index(statement), body.index(after)
        new = [parse_statement(text) for text in lines]

        def edit(node: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(node, (cst.IndentedBlock, cst.Module))
            out: list[cst.CSTNode] = []
            for i, stmt in enumerate(node.body):
                if i != drop:
                    out.append(stmt)
                if i == at:
                    out += new
            return node.with_changes(body=out)

        assert holder is not None
        if not self.first_line:
            self.first_line = self.program.line(statement)
        self.plan_edit(holder, edit, f"the statistics of all rows at line "
                                     f"{self.program.line(statement)} fitted after the split: "
                                     + "; ".join(lines))

    def _in_place(self, assign: cst.Assign, statement: cst.CSTNode, rows: str,
                  parts: list[tuple[str, cst.CSTNode]], train: str, anchor: cst.CSTNode
                  ) -> bool:
        """``rows = E(rows)`` before the split: the statistics of the training part,
        applied to every part after the split."""
        value = assign.value
        taken = self.program.visible_names(statement)
        others = [n for n, _ in parts if n != train]
        func = value.func if isinstance(value, cst.Call) else None
        if isinstance(func, cst.Attribute) and func.attr.value == "fit_transform":
            scaler = func.value
            if isinstance(scaler, cst.Call) and self.is_qualified(scaler.func,
                                                                  SKLEARN_PREPROCESSING):
                name = fresh_name("scaler", taken)
                lines = [f"{name} = {code(scaler)}"]
            elif isinstance(scaler, cst.Name):
                name, lines = scaler.value, []
            else:
                return False
            lines += [f"{train} = {name}.fit_transform({train})",
                      *(f"{p} = {name}.transform({p})" for p in others)]
            self._move(statement, anchor, lines)
            return True
        stats: dict[str, str] = {}
        lines = []
        for call in find(value, m.Call(func=m.Attribute(value=m.Name(rows)))):
            assert isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
            key = code(call)
            if key in stats:
                continue
            name = fresh_name(f"{rows}_{call.func.attr.value}", [*taken, *stats.values()])
            stats[key] = name
            lines.append(f"{name} = {_renamed(call, rows, train)}")
        if not stats:
            return False
        lines += [f"{p} = {_renamed(value, rows, p, stats)}" for p in (train, *others)]
        self._move(statement, anchor, lines)
        return True
