"""Provenance: from a value the script uses back to where the script makes it.

A call's contract is broken by one argument (a target of shape ``(16, 1)``, ids of dtype
float64, a batch of one row); the fix belongs where the script makes that value, which is
rarely the failing line. :class:`Provenance` follows an expression of the user's code back
through the module, keeping the part of each value the traced one is (a *path*: the item
an iteration yields, the element ``2`` of a tuple, the key ``"labels"`` of a dict):

- names: assignments, tuple unpacking (``a, b = f()``), ``for`` targets (``for i, (x, y)
  in enumerate(loader)``), a function's parameters (the arguments its call sites give, or
  its default; a method's ``self``: the class's instantiations; a module's ``forward``:
  the calls of its instances), ``self.x`` (the
  assignments in the class's methods), a list built empty and filled by
  ``append``/``extend``;
- calls: a function of the module (its ``return`` values), a class of the module
  instantiated and iterated (its ``__getitem__``), ``DataLoader(dataset, collate_fn=f)``
  iterated (``f``'s return when it is the module's, else the dataset's items),
  ``TensorDataset(a, b)`` (item ``i`` holds a row of ``a``, ``b``...), ``enumerate``,
  ``zip``, ``tqdm``, ``iter``, ``list``;
- containers: tuple, list and dict literals, ``dict(k=v)``, subscripts by a literal index
  or key, a key stored by subscript (``item["labels"] = ...``), a dict comprehension
  over ``x.items()`` (``{k: v.to(d) for k, v in b.items()}``);
- calls that keep the value's data (``.to(device)``, ``.values``, ``torch.tensor(x)``,
  ``np.asarray(x)``, ``.float()``...): followed to their receiver or data argument, and
  kept in the chain, since an operator may act there.

Each :class:`Origin` is a terminal (a call of a library maker, a literal, anything not
followed) with ``via``: every expression the value went through, from the use (first) to
the terminal (last). Repair operators (:mod:`autofix.toolkit.source_ops`) walk ``via``
from the source end and act at the first point that makes the broken property.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst
import libcst.matchers as m
from libcst.metadata import PositionProvider

from autofix.toolkit import patterns
from autofix.toolkit.edits import code
from autofix.toolkit.parsed import find
from autofix.toolkit.scope import PlannedEdits
from autofix.toolkit.values import literal_value

#: How many links a chain follows before it stops (a cycle, an odd program).
MAX_DEPTH = 24
#: Origins kept per trace.
MAX_ORIGINS = 16
#: The item an iteration yields (a path element).
ITEM = "*"

Path = tuple[object, ...]

#: Methods and attributes that keep a value's data (its rows, and for most its dtype and
#: trailing axes): followed to their receiver.
KEEP_METHODS = frozenset({
    "to", "cuda", "cpu", "detach", "clone", "contiguous", "numpy", "tolist", "copy",
    "float", "double", "half", "long", "int", "bfloat16", "type", "astype", "to_numpy",
    "squeeze", "unsqueeze", "view", "reshape", "flatten", "requires_grad_", "pin_memory",
})
KEEP_ATTRIBUTES = frozenset({"values", "T", "data"})
#: Methods whose items are chunks of rows of their receiver (``for yb in y.split(8)``).
SPLITS = frozenset({"split", "chunk", "tensor_split", "unbind"})
#: Functions whose first argument is the data they convert (kept in the chain).
CONVERTERS = (patterns.TORCH_CONVERTERS, patterns.NUMPY_CONVERTERS, patterns.LIST_OR_TUPLE)


@dataclass(frozen=True)
class Origin:
    """Where (part of) a value is made: ``node`` the terminal expression, ``path`` the part
    of its value the traced value is (``()`` the whole of it), ``via`` the expressions the
    value went through, from the use to ``node`` (both included)."""

    node: cst.CSTNode
    path: Path
    via: tuple[cst.CSTNode, ...]


class Provenance:
    """The provenance service of one recipe's module (see the module docstring)."""

    def __init__(self, recipe: PlannedEdits) -> None:
        self.recipe = recipe
        self.program = recipe.program

    # -- where the use is ------------------------------------------------------------

    def line(self, node: cst.CSTNode) -> int:
        """The line ``node`` starts on (0 unknown)."""
        return self.program.line(node)

    def name_read(self, name: str, line: int, key: str = "") -> cst.BaseExpression | None:
        """The expression a runtime holder names: a read of ``name`` (``self.x`` for
        ``"self.x"``) on ``line`` of this module (the line a frame was at), else the read
        of it nearest that line in the same function (a loader named on the ``for`` line
        above the failing one); subscripted by ``key`` when the holder is a container
        (``batch["labels"]``, ``batch[2]``). ``None`` when the module reads no such name
        there."""
        at_line = self._node_on(line)
        here = self.program.function_of(at_line) if at_line is not None else None
        wanted: object = int(key) if key.isdigit() else key
        best: tuple[tuple[int, int], cst.BaseExpression] | None = None
        for node in self._reads(name):
            pos = self.recipe.get_metadata(PositionProvider, node, None)
            if pos is None:
                continue
            if pos.start.line <= line <= pos.end.line:
                distance = 0
            elif at_line is not None and self.program.function_of(node) is here:
                distance = abs(pos.start.line - line)
            else:
                continue
            read: cst.BaseExpression = node
            parent = self.program.parent(node)
            keyed = key and isinstance(parent, cst.Subscript) and parent.value is node \
                and len(parent.slice) == 1 and isinstance(parent.slice[0].slice, cst.Index) \
                and literal_value(parent.slice[0].slice.value) == wanted
            if keyed:
                assert isinstance(parent, cst.Subscript)
                read = parent
            rank = (distance, 0 if keyed or not key else 1)
            if best is None or rank < best[0]:
                best = (rank, read)
        found = best[1] if best is not None else None
        if found is None or not key or isinstance(found, cst.Subscript):
            return found
        index: cst.BaseExpression = cst.Integer(key) if key.isdigit() \
            else cst.SimpleString(repr(key))
        return cst.Subscript(value=found, slice=[cst.SubscriptElement(cst.Index(index))])

    def _node_on(self, line: int) -> cst.CSTNode | None:
        """A statement of the module that holds ``line``, the innermost one."""
        found: cst.CSTNode | None = None
        for node in find(self.program.tree, m.SimpleStatementLine()):
            pos = self.recipe.get_metadata(PositionProvider, node, None)
            if pos is not None and pos.start.line <= line <= pos.end.line:
                found = node
        return found

    def _reads(self, name: str) -> Iterator[cst.BaseExpression]:
        if name.startswith("self."):
            attr = name[len("self."):]
            for node in find(self.program.tree, m.Attribute()):
                if isinstance(node, cst.Attribute) and node.attr.value == attr \
                        and m.matches(node.value, m.Name("self")):
                    yield node
            return
        for node in find(self.program.tree, m.Name()):
            if isinstance(node, cst.Name) and node.value == name:
                parent = self.program.parent(node)
                if isinstance(parent, cst.Attribute) and parent.attr is node:
                    continue
                yield node

    # -- tracing ---------------------------------------------------------------------

    def origins(self, expr: cst.BaseExpression, path: Path = ()) -> list[Origin]:
        """Where the value ``expr`` (or its part ``path``) is made, each with the chain of
        expressions it went through (see the module docstring)."""
        out: list[Origin] = []
        self._trace(expr, path, (), out, set())
        return out[:MAX_ORIGINS]

    def _trace(self, expr: cst.CSTNode, path: Path, via: tuple[cst.CSTNode, ...],
               out: list[Origin], seen: set[tuple[int, Path]]) -> None:
        key = (id(expr), path)
        if len(via) > MAX_DEPTH or key in seen or len(out) >= MAX_ORIGINS:
            return
        seen.add(key)
        via = (*via, expr)
        before = len(out)
        for nxt, nxt_path in self._steps(expr, path):
            self._trace(nxt, nxt_path, via, out, seen)
        if len(out) == before:
            out.append(Origin(expr, path, via))

    def _steps(self, expr: cst.CSTNode, path: Path) -> list[tuple[cst.CSTNode, Path]]:
        """The expressions ``expr``'s value (part ``path``) comes from, one link back."""
        if isinstance(expr, cst.Name):
            stored = self._stored(expr, path)
            if stored:
                return stored
            return [s for target in self.program.resolve(expr.value, expr)
                    for s in self._from_target(target, path)]
        if isinstance(expr, cst.Attribute):
            if m.matches(expr.value, m.Name("self")):
                return self._self_attribute(expr, path)
            if expr.attr.value in KEEP_ATTRIBUTES:
                return [(expr.value, path)]
            return []
        if isinstance(expr, cst.Subscript):
            return self._subscript(expr, path)
        if isinstance(expr, (cst.Tuple, cst.List)) and path and isinstance(path[0], int):
            elements = expr.elements
            index = path[0]
            if index < len(elements) and not isinstance(elements[index], cst.StarredElement):
                return [(elements[index].value, path[1:])]
            return []
        if isinstance(expr, cst.Dict) and path and isinstance(path[0], str) and path[0] != ITEM:
            return [(e.value, path[1:]) for e in expr.elements
                    if isinstance(e, cst.DictElement) and literal_value(e.key) == path[0]]
        if isinstance(expr, cst.DictComp) and path and isinstance(path[0], str):
            return self._dict_comprehension(expr, path)
        if isinstance(expr, cst.Call):
            return self._call(expr, path)
        if isinstance(expr, cst.BinaryOperation) and not path:
            # arithmetic keeps a tensor's dtype and shape: 1 - mask is made where mask is
            return [(side, path) for side in (expr.left, expr.right)
                    if not isinstance(side, (cst.Integer, cst.Float))]
        return []

    def _from_target(self, target: cst.CSTNode, path: Path) -> list[tuple[cst.CSTNode, Path]]:
        """What binds ``target`` (a name node an assignment, a ``for`` or a parameter
        binds): the value it is assigned from, with the indices of its place in a tuple
        target put in front of ``path``."""
        if isinstance(target, cst.Param):
            return self._parameter(target, path)
        indices: list[object] = []
        node: cst.CSTNode = target
        parent = self.program.parent(node)
        while isinstance(parent, cst.Element):
            holder = self.program.parent(parent)
            if not isinstance(holder, (cst.Tuple, cst.List)):
                return []
            indices.insert(0, list(holder.elements).index(parent))
            node, parent = holder, self.program.parent(holder)
        full = (*indices, *path)
        if isinstance(parent, cst.AssignTarget):
            assign = self.program.parent(parent)
            if not isinstance(assign, cst.Assign):
                return []
            if isinstance(target, cst.Name) and not indices and path \
                    and _empty_list(self.recipe, assign.value):
                return self._appended(target, path)
            return [(assign.value, full)]
        if isinstance(parent, cst.AnnAssign) and parent.value is not None:
            return [(parent.value, full)]
        if isinstance(parent, (cst.For, cst.CompFor)) and parent.target is node:
            return [(parent.iter, (ITEM, *full))]
        return []

    def _module_calls(self, cls: cst.ClassDef, func: cst.FunctionDef, param: str
                      ) -> list[tuple[cst.Call, cst.BaseExpression]]:
        """The calls of an instance of ``cls`` (``model(x)``: torch runs its ``forward``)
        and the argument each gives ``param`` of ``func``."""
        names = [p.name.value for p in (*func.params.posonly_params, *func.params.params)][1:]
        out: list[tuple[cst.Call, cst.BaseExpression]] = []
        for call in self.program.calls:
            if not isinstance(call.func, (cst.Name, cst.Attribute)) or \
                    self.program.class_called(call) is not None:
                continue
            if not any(isinstance(v, cst.Call) and self.program.class_called(v) is cls
                       for v in self.program.values(call.func)):
                continue
            given = next((a.value for a in call.args if a.keyword is not None
                          and a.keyword.value == param), None)
            positional = [a for a in call.args if a.keyword is None]
            if given is None and param in names and names.index(param) < len(positional) \
                    and not any(a.star for a in positional[:names.index(param) + 1]):
                given = positional[names.index(param)].value
            if given is not None:
                out.append((call, given))
        return out

    def _stored(self, expr: cst.Name, path: Path) -> list[tuple[cst.CSTNode, Path]]:
        """Key ``path[0]`` of a container the same function fills by subscript before
        ``expr`` is read (``item["labels"] = torch.tensor(...)``): the values stored."""
        if not path or not isinstance(path[0], (str, int)) or path[0] == ITEM:
            return []
        here = self.program.function_of(expr)
        line = self.line(expr)
        out: list[tuple[cst.CSTNode, Path]] = []
        for node in find(self.program.tree, m.Assign()):
            assert isinstance(node, cst.Assign)
            for target in node.targets:
                sub = target.target
                if isinstance(sub, cst.Subscript) and m.matches(sub.value, m.Name(expr.value)) \
                        and len(sub.slice) == 1 and isinstance(sub.slice[0].slice, cst.Index) \
                        and literal_value(sub.slice[0].slice.value) == path[0] \
                        and self.program.function_of(node) is here and self.line(node) < line:
                    out.append((node.value, path[1:]))
        return out[-1:]  # the last store before the read

    def _self_attribute(self, expr: cst.Attribute, path: Path
                        ) -> list[tuple[cst.CSTNode, Path]]:
        """``self.x``: what the methods of its class assign to ``self.x``, also as part of a
        tuple (``self.train, self.val = loaders``)."""
        cls = self.program.class_of(expr)
        if cls is None:
            return []
        out: list[tuple[cst.CSTNode, Path]] = []
        for node in find(cls, m.Attribute()):
            if not (isinstance(node, cst.Attribute) and node.attr.value == expr.attr.value
                    and m.matches(node.value, m.Name("self"))):
                continue
            out += self._from_target(node, path)
        return out

    def _appended(self, target: cst.Name, path: Path) -> list[tuple[cst.CSTNode, Path]]:
        """An item of a list built empty and filled by ``name.append(v)`` (or
        ``name.extend([...])``) in the same function: each value appended (any index)."""
        func = self.program.function_of(target)
        out: list[tuple[cst.CSTNode, Path]] = []
        for call in self.program.calls:
            callee = call.func
            if not (isinstance(callee, cst.Attribute) and m.matches(callee.value,
                                                                     m.Name(target.value))
                    and callee.attr.value in ("append", "extend") and call.args
                    and self.program.function_of(call) is func):
                continue
            value = call.args[0].value
            if callee.attr.value == "append":
                out.append((value, path[1:]))
            elif isinstance(value, (cst.List, cst.Tuple)):
                out += [(e.value, path[1:]) for e in value.elements
                        if isinstance(e, cst.Element)]
        return out

    def _parameter(self, param: cst.Param, path: Path) -> list[tuple[cst.CSTNode, Path]]:
        func = next((a for a in self.program.ancestors(param)
                     if isinstance(a, (cst.FunctionDef, cst.Lambda))), None)
        if not isinstance(func, cst.FunctionDef):
            return []
        cls = self.program.class_of(param)
        first = (*func.params.posonly_params, *func.params.params)[:1]
        if cls is not None and first and first[0] is param:  # self: the class's instances
            return [(c, path) for c in self.program.calls
                    if self.program.class_called(c) is cls]
        out: list[tuple[cst.CSTNode, Path]] = []
        unfilled = False
        for site in self.program.call_sites(func):
            arg = self.program.bound(func, site, param.name.value)
            if arg is None:
                unfilled = True
            else:
                out.append((arg, path))
        if cls is not None and func.name.value in ("forward", "__call__"):
            for _, arg in self._module_calls(cls, func, param.name.value):
                out.append((arg, path))
        if param.default is not None and (unfilled or not out):
            out.append((param.default, path))
        return out

    def _subscript(self, expr: cst.Subscript, path: Path) -> list[tuple[cst.CSTNode, Path]]:
        if len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
            index = literal_value(expr.slice[0].slice.value)
            if isinstance(index, (int, str)) and not isinstance(index, bool):
                return [(expr.value, (index, *path))]
        # a slice, a column selection (df[["label"]]), an added axis (x[:, None]): the rows
        # and dtype come from what is subscripted
        return [(expr.value, path)]

    def _dict_comprehension(self, expr: cst.DictComp, path: Path
                            ) -> list[tuple[cst.CSTNode, Path]]:
        """``{k: v.to(d) for k, v in batch.items()}``: key ``path[0]`` of it is the value
        expression (``v.to(d)``), whose ``v`` is followed to ``batch``'s values."""
        return [(expr.value, path[1:])]  # the value, whose names the comprehension binds

    def _call(self, call: cst.Call, path: Path) -> list[tuple[cst.CSTNode, Path]]:
        iterated = bool(path) and path[0] == ITEM
        rest = path[1:]
        func = self.program.function_called(call)
        if func is not None:
            returns: list[cst.CSTNode] = list(self.program.returns(func))
            returns += [y.value for y in find(func, m.Yield()) if isinstance(y, cst.Yield)
                        and isinstance(y.value, cst.BaseExpression)
                        and self.program.function_of(y) is func]
            has_yield = any(isinstance(y, cst.Yield) and self.program.function_of(y) is func
                            for y in find(func, m.Yield()))
            if has_yield and iterated:  # a generator iterated: each item is a yield
                return [(r, rest) for r in returns]
            return [(r, path) for r in returns]
        cls = self.program.class_called(call)
        if cls is not None and iterated:
            getitem = next((s for s in cls.body.body if isinstance(s, cst.FunctionDef)
                            and s.name.value == "__getitem__"), None)
            if getitem is not None:
                return [(r, rest) for r in self.program.returns(getitem)]
            return []
        if iterated:
            found = self._iterated(call, rest)
            if found is not None:
                return found
            found = self._dataset_op(call, path)
            if found is not None:
                return found
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in KEEP_METHODS:
            return [(call.func.value, path)]
        if any(self.recipe.is_qualified(call.func, p) for p in CONVERTERS) and call.args \
                and call.args[0].keyword is None and not call.args[0].star:
            return [(call.args[0].value, path)]
        if self.recipe.is_qualified(call.func, patterns.DICT) and path \
                and isinstance(path[0], str):
            return [(a.value, path[1:]) for a in call.args
                    if a.keyword is not None and a.keyword.value == path[0]]
        return []

    def _iterated(self, call: cst.Call, rest: Path) -> list[tuple[cst.CSTNode, Path]] | None:
        """The items of iterating ``call``'s value, when it is a loader, a dataset or an
        iteration helper (``None`` when it is none of them)."""
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        if self.recipe.is_qualified(call.func, patterns.DATALOADER):
            collate = keywords.get("collate_fn")
            if collate is not None:
                funcs = [v for v in self.program.values(collate)
                         if isinstance(v, cst.FunctionDef)]
                funcs += [t for t in self.program.resolve(collate.value, collate)
                          if isinstance(t, cst.FunctionDef)] if isinstance(collate, cst.Name) \
                    else []
                if funcs:
                    return [(r, rest) for f in funcs for r in self.program.returns(f)]
                return []  # a library collator (padding): its batches are its own
            dataset = keywords.get("dataset", positional[0] if positional else None)
            return [(dataset, (ITEM, *rest))] if dataset is not None else []
        if self.recipe.is_qualified(call.func, patterns.TENSOR_DATASET):
            if rest and isinstance(rest[0], int) and rest[0] < len(positional):
                return [(positional[rest[0]], rest[1:])]
            return []
        if self.recipe.is_qualified(call.func, patterns.ENUMERATE):
            if rest and rest[0] == 1 and positional:
                return [(positional[0], (ITEM, *rest[1:]))]
            return []
        if self.recipe.is_qualified(call.func, patterns.ZIP):
            if rest and isinstance(rest[0], int) and rest[0] < len(positional):
                return [(positional[rest[0]], (ITEM, *rest[1:]))]
            return []
        if self.recipe.is_qualified(call.func, patterns.ITERATION_WRAPPERS) and positional:
            return [(positional[0], (ITEM, *rest))]
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in SPLITS:
            return [(call.func.value, rest)]  # the chunks of x.split(8) are rows of x
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "items" \
                and rest and rest[0] == 1:
            return [(call.func.value, rest[1:])]  # a value of d.items(), under some key
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "values":
            return [(call.func.value, rest)]
        return None

    def _dataset_op(self, call: cst.Call, path: Path) -> list[tuple[cst.CSTNode, Path]] | None:
        """A row's column ``path[1]`` of a ``datasets`` pipeline step: ``.map(fn)`` (the
        column ``fn`` returns, else the input's), ``Dataset.from_dict({...})`` (the dict's
        list), ``rename_column(a, b)`` (column ``a``), and the steps that keep a row's
        columns (``select``, ``shuffle``, ``filter``, ``with_format``, ...)."""
        column = path[1] if len(path) > 1 and isinstance(path[1], str) else None
        func = call.func
        if column is None:
            return None
        rows = path[2:]
        if self.recipe.is_qualified(func, patterns.DATASET_FROM_DICT) \
                and call.args:
            return [(call.args[0].value, (column, ITEM, *rows))]
        if not isinstance(func, cst.Attribute):
            return None
        method, receiver = func.attr.value, func.value
        if method == "map":
            fn = next((a.value for a in call.args if a.keyword is None
                       or a.keyword.value == "function"), None)
            made = self._returned(fn) if fn is not None else []
            out: list[tuple[cst.CSTNode, Path]] = [(r, (column, *rows)) for r in made
                                                   if _has_key(self.recipe, r, column)]
            return out or [(receiver, path)]
        if method in ("rename_column",) and len(call.args) >= 2 \
                and literal_value(call.args[1].value) == column:
            old = literal_value(call.args[0].value)
            return [(receiver, (ITEM, old, *rows))] if isinstance(old, str) else []
        if method in _ROW_KEEPING:
            return [(receiver, path)]
        return None

    def _returned(self, fn: cst.BaseExpression) -> list[cst.BaseExpression]:
        """What a function given to ``map`` returns: a lambda's body, a module function's
        ``return`` values."""
        if isinstance(fn, cst.Lambda):
            return [fn.body]
        if isinstance(fn, cst.Name):
            return [r for t in self.program.resolve(fn.value, fn)
                    if isinstance(t, cst.FunctionDef) for r in self.program.returns(t)]
        return []

    # -- reading a chain ---------------------------------------------------------------

    def describe(self, origin: Origin) -> str:
        """The chain in words (``y <- torch.tensor(...) <- df[["label"]]``), for a commit."""
        return " <- ".join(code(n).strip().splitlines()[0][:40] for n in origin.via)


#: ``datasets`` methods that keep each row's columns as they are.
_ROW_KEEPING = frozenset({"select", "shuffle", "filter", "with_format", "set_format",
                          "remove_columns", "sort", "take", "skip", "flatten_indices",
                          "train_test_split"})


def _empty_list(recipe: PlannedEdits, node: cst.BaseExpression) -> bool:
    """``[]`` or ``list()``."""
    return (isinstance(node, cst.List) and not node.elements) or (
        isinstance(node, cst.Call) and not node.args
        and recipe.is_qualified(node.func, patterns.LIST_OR_TUPLE)
        and code(node.func).endswith("list"))


def _has_key(recipe: PlannedEdits, node: cst.BaseExpression, key: str) -> bool:
    """``node`` is a dict literal (or ``dict(...)``) with the key ``key``."""
    if isinstance(node, cst.Dict):
        return any(isinstance(e, cst.DictElement) and literal_value(e.key) == key
                   for e in node.elements)
    return isinstance(node, cst.Call) and recipe.is_qualified(node.func, patterns.DICT) \
        and any(a.keyword is not None and a.keyword.value == key for a in node.args)
