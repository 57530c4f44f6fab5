"""The input contracts of tensor operations that have no Python frame of their own
(``masked_fill``, ``view``, ``index_select``, ``torch.where``...): torch raises from its C++
core, so the arguments are not locals of any library frame. They are read where the user's
code makes the call: the failing instruction's span in the innermost user frame (Python
3.11's ``co_positions``; the whole line before that), parsed, and each argument evaluated
in that frame when it is a plain expression (names, attributes, literal subscripts,
arithmetic on them: nothing is called). The contract then checks the real values as the
library-frame contracts do, and its trial calls the operation again on them.

torch 2.13's rules (measured): ``masked_fill`` takes a bool mask (``masked_fill_ only
supports boolean masks, but got mask with dtype long``), as do ``torch.where`` and
``masked_select``; ``view`` needs a shape compatible with the tensor's strides (``view size
is not compatible with input tensor's size and stride ... Use .reshape(...) instead``);
``index_select``/``gather``/``scatter`` take int64 indices.
"""

from __future__ import annotations

import ast
import linecache
import operator
from collections.abc import Callable, Mapping
from typing import Any

from .model import Breach, Call, Confirmed, Contract, Example, dtype_text, shape_text

#: The binary operators a plain argument expression may use (arithmetic on tensors).
_BINARY: Mapping[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.MatMult: operator.matmul}
_COMPARE: Mapping[type, Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne}


#: Builtins an argument may call (they run no code of the script's on numbers and strings).
SAFE_BUILTINS = frozenset({"float", "int", "bool", "abs", "min", "max", "round"})
#: Methods of torch's own tensors an argument may call (they only read sizes).
SAFE_METHODS = frozenset({"size", "dim", "numel", "stride", "is_contiguous"})


class Unreadable(Exception):
    """An argument that is not a plain expression (it would call code to evaluate)."""


def evaluate(node: ast.AST, scope: Mapping[str, Any], builtins: Mapping[str, Any]) -> Any:
    """The value of a plain expression in a frame's ``scope``: names, attributes, literal
    or name subscripts and slices, literals, unary minus/not/invert, arithmetic and
    comparisons, a few builtins on those (:data:`SAFE_BUILTINS`: ``float("-inf")``), a
    tensor's size methods (:data:`SAFE_METHODS`: ``h.size(0)``), ``len`` of a tensor or a
    builtin container.
    Raises :class:`Unreadable` for anything that would call code the script wrote (a
    call, a lambda, a comprehension)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in scope:
            return scope[node.id]
        if node.id in builtins:
            return builtins[node.id]
        raise Unreadable(node.id)
    if isinstance(node, ast.Attribute):
        return getattr(evaluate(node.value, scope, builtins), node.attr)
    if isinstance(node, ast.Subscript):
        return evaluate(node.value, scope, builtins)[evaluate(node.slice, scope, builtins)]
    if isinstance(node, ast.Slice):
        return slice(*(None if part is None else evaluate(part, scope, builtins)
                       for part in (node.lower, node.upper, node.step)))
    if isinstance(node, ast.Tuple):
        return tuple(evaluate(e, scope, builtins) for e in node.elts)
    if isinstance(node, ast.List):
        return [evaluate(e, scope, builtins) for e in node.elts]
    if isinstance(node, ast.UnaryOp):
        value = evaluate(node.operand, scope, builtins)
        if isinstance(node.op, ast.USub):
            return -value
        if isinstance(node.op, ast.Invert):
            return ~value
        if isinstance(node.op, ast.Not):
            return not value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](evaluate(node.left, scope, builtins),
                                      evaluate(node.right, scope, builtins))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in SAFE_METHODS and not node.keywords:  # h.size(0): torch's
        receiver = evaluate(node.func.value, scope, builtins)
        if type(receiver).__module__.split(".")[0] != "torch":
            raise Unreadable(node.func.attr)
        return getattr(receiver, node.func.attr)(*(evaluate(a, scope, builtins)
                                                   for a in node.args))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id == "len" and "len" not in scope and len(node.args) == 1:
        value = evaluate(node.args[0], scope, builtins)
        if not isinstance(value, (list, tuple, dict, str)) and \
                type(value).__module__.split(".")[0] != "torch":
            raise Unreadable("len")  # a Dataset's __len__ is the script's code
        return len(value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in SAFE_BUILTINS and node.func.id not in scope \
            and not node.keywords:  # float("-inf"), len(x): the builtin itself, no user code
        return builtins[node.func.id](*(evaluate(a, scope, builtins) for a in node.args))
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
        return _COMPARE[type(node.ops[0])](evaluate(node.left, scope, builtins),
                                           evaluate(node.comparators[0], scope, builtins))
    raise Unreadable(type(node).__name__)


def _span(frame: Any, lasti: int) -> tuple[int, int, int, int] | None:
    """(line, end line, column, end column) of the instruction at ``lasti`` (Python 3.11+),
    ``None`` when unknown."""
    try:
        positions = list(frame.f_code.co_positions())
        found = positions[lasti // 2]
    except (AttributeError, IndexError, TypeError):
        return None
    if any(p is None for p in found):
        return None
    return found  # type: ignore[no-any-return]


def _source(filename: str, first: int, last: int) -> str:
    return "".join(linecache.getline(filename, n) for n in range(first, last + 1))


def calls_at(frame: Any, lasti: int) -> list[tuple[ast.Call, int, int]]:
    """The calls of the failing instruction of ``frame`` (innermost first) with the line
    and column offset their span starts at: the instruction's own span parsed as one
    expression (Python 3.11+), else every call of its line."""
    filename = frame.f_code.co_filename
    span = _span(frame, lasti)
    if span is not None:
        line, end_line, col, end_col = span
        text = _source(filename, line, end_line)
        lines = text.splitlines(keepends=True)
        if lines:
            lines[-1] = lines[-1][:end_col] if len(lines) > 1 else lines[-1][col:end_col]
            if len(lines) > 1:
                lines[0] = lines[0][col:]
            try:
                expression: ast.AST | None = ast.parse("".join(lines).strip(), mode="eval")
            except SyntaxError:
                expression = None
            if expression is not None:
                found = [n for n in ast.walk(expression) if isinstance(n, ast.Call)]
                return [(c, line, col) for c in reversed(found)]
    line = frame.f_lineno
    try:
        tree = ast.parse(_source(filename, line, line).strip())
    except SyntaxError:
        return []
    indent = len(linecache.getline(filename, line)) - len(
        linecache.getline(filename, line).lstrip())
    return [(c, line, indent) for c in reversed(
        [n for n in ast.walk(tree) if isinstance(n, ast.Call)])]


def _mask_of(call: Call) -> tuple[Any, str] | None:
    for name in ("mask", "condition"):
        value = call.get(name)
        if call.is_tensor(value):
            return value, name
    return None


def _mask_dtype(call: Call) -> Breach | None:
    found = _mask_of(call)
    if found is None:
        return None
    mask, _ = found
    if str(mask.dtype) == "torch.bool":
        return None
    return Breach("dtype", f"a mask of dtype {dtype_text(mask)}", "a bool mask (torch.bool)",
                  mask, {"dtype": dtype_text(mask)})


def _mask_trial(call: Call, breach: Breach) -> Confirmed | None:
    found = _mask_of(call)
    redo = call.get("redo")
    if found is None or not callable(redo):
        return None
    mask, name = found
    if call.passes(lambda: redo(**{name: mask.bool()})):
        return Confirmed("cast-bool", f"{name}.bool()")
    return None


def _not_viewable(call: Call) -> Breach | None:
    tensor = call.get("self")
    if not call.is_tensor(tensor) or tensor.is_contiguous():
        return None
    return Breach("contiguity", f"a non-contiguous tensor of shape {shape_text(tensor)} (a "
                                "transpose or permute of another)",
                  "a tensor whose memory layout the new shape can view: reshape() copies "
                  "when it must", tensor, {"shape": list(tensor.shape)})


def _view_trial(call: Call, breach: Breach) -> Confirmed | None:
    tensor, shape = call.get("self"), call.get("args")
    if not call.is_tensor(tensor) or not isinstance(shape, tuple):
        return None
    if call.passes(lambda: tensor.reshape(*shape)):
        return Confirmed("view-to-reshape", ".reshape(...)")
    return None


def _index_dtype(call: Call) -> Breach | None:
    index = call.get("index")
    if not call.is_tensor(index) or str(index.dtype) == "torch.int64":
        return None
    return Breach("dtype", f"indices as {dtype_text(index)}", "int64 indices (torch.long)",
                  index, {"dtype": dtype_text(index)})


def _index_trial(call: Call, breach: Breach) -> Confirmed | None:
    index, redo = call.get("index"), call.get("redo")
    if not call.is_tensor(index) or not callable(redo):
        return None
    if call.passes(lambda: redo(index=index.long())):
        return Confirmed("cast-int64", "index.long()")
    return None


_TORCH = "import torch\n"

#: The operations of this module, by the name the call is made under; each with the names
#: of its positional arguments, as the contract reads them (``self``: the tensor a method
#: is called on).
OPERATIONS: Mapping[str, tuple[str, ...]] = {
    "masked_fill": ("mask", "value"), "masked_fill_": ("mask", "value"),
    "masked_select": ("mask",), "where": ("condition", "input", "other"),
    "view": (), "index_select": ("dim", "index"), "gather": ("dim", "index"),
}

OPS: tuple[Contract, ...] = (
    Contract(
        id="mask-dtype",
        category="mask-not-bool",
        api="Tensor.masked_fill / masked_select, torch.where",
        sites=(("<op>", "masked_fill"), ("<op>", "masked_fill_"), ("<op>", "masked_select"),
               ("<op>", "where")),
        argument="mask",
        says="a bool mask",
        check=_mask_dtype,
        trial=_mask_trial,
        repairs=("cast-bool",),
        title="a mask of numbers (0/1 as long or float) where a call takes a bool mask "
              "(masked_fill, torch.where, masked_select)",
        hint="make the mask bool where it is made ((x > 0), .bool()), or write "
             "mask.bool() where it is used",
        examples=(
            Example(_TORCH + "x = torch.zeros(2, 3)\nm = torch.ones(2, 3, dtype=torch.long)\n"
                             "y = x.masked_fill(m, 1.0)\n"),
            Example(_TORCH + "x = torch.zeros(2, 3)\nm = torch.ones(2, 3)\n"
                             "y = torch.where(m, x, -x)\n"),
            Example(_TORCH + "x = torch.zeros(2, 3)\nm = torch.ones(2, 3, dtype=torch.bool)\n"
                             "y = x.masked_fill(m, 1.0)\n", breaks=False),
        ),
    ),
    Contract(
        id="view-contiguous",
        category="view-on-non-contiguous",
        api="Tensor.view",
        sites=(("<op>", "view"),),
        argument="self",
        says="a tensor whose strides the new shape can view (a contiguous one)",
        check=_not_viewable,
        trial=_view_trial,
        repairs=("view-to-reshape",),
        title="view() on a tensor whose memory a transpose or permute reordered (torch's "
              "advice: use .reshape(...) instead)",
        hint="use .reshape(...) where .view(...) is called on the transposed tensor, or "
             ".contiguous().view(...)",
        examples=(
            Example(_TORCH + "x = torch.zeros(4, 6).t()\ny = x.view(24)\n"),
            Example(_TORCH + "h = torch.zeros(2, 3, 4).transpose(1, 2)\n"
                             "y = h.view(h.size(0), -1)\n"),
            Example(_TORCH + "x = torch.zeros(4, 6)\ny = x.view(24)\n", breaks=False),
        ),
    ),
    Contract(
        id="index-dtype",
        category="float-token-ids",
        api="Tensor.index_select / gather",
        sites=(("<op>", "index_select"), ("<op>", "gather")),
        argument="index",
        says="int64 indices",
        check=_index_dtype,
        trial=_index_trial,
        repairs=("cast-int64",),
        examples=(
            Example(_TORCH + "x = torch.zeros(5, 3)\ni = torch.tensor([0., 2.])\n"
                             "y = x.index_select(0, i)\n"),
            Example(_TORCH + "x = torch.zeros(5, 3)\ni = torch.tensor([0, 2])\n"
                             "y = x.index_select(0, i)\n", breaks=False),
        ),
    ),
)


def _bind(call: ast.Call, scope: Mapping[str, Any], builtins: Mapping[str, Any],
          names: tuple[str, ...]) -> dict[str, Any] | None:
    """The call's receiver and arguments, evaluated (``self``, the names of ``names`` in
    order, keywords as given, ``args``: the positional values); ``None`` when one of them
    is not a plain expression."""
    try:
        out: dict[str, Any] = {}
        func = call.func
        if isinstance(func, ast.Attribute):
            out["self"] = evaluate(func.value, scope, builtins)
        values = [evaluate(a, scope, builtins) for a in call.args
                  if not isinstance(a, ast.Starred)]
        if len(values) != len(call.args):
            return None
        out["args"] = tuple(values)
        out.update(zip(names, values, strict=False))
        for keyword in call.keywords:
            if keyword.arg is None:
                return None
            out[keyword.arg] = evaluate(keyword.value, scope, builtins)
        return out
    except Exception:  # noqa: BLE001 - an argument that cannot be read tells nothing
        return None


def _redo(bound: Mapping[str, Any], method: str, names: tuple[str, ...]
          ) -> Callable[..., Any] | None:
    """The operation made again with some arguments replaced (``redo(mask=m.bool())``)."""
    fn = getattr(bound.get("self"), method, None)
    if fn is None:
        return None

    def redo(**changed: Any) -> Any:
        args = list(bound.get("args", ()))
        for i, name in enumerate(names[:len(args)]):
            if name in changed:
                args[i] = changed[name]
        keywords = {k: changed.get(k, v) for k, v in bound.items()
                    if k not in ("self", "args", "redo", *names)}
        return fn(*args, **keywords)
    return redo


def op_breach(frame: Any, lasti: int) -> tuple[Contract, Breach, dict[str, Any]] | None:
    """The contract of an operation of :data:`OPERATIONS` the failing instruction of the
    user's ``frame`` broke, with the breach and where the offending argument is written
    (``{"line", "column", "end_line", "end_column", "call_line", "call_column",
    "call_end_line", "call_end_column"}``); ``None`` when none did. Never raises."""
    try:
        scope = {**frame.f_globals, **frame.f_locals}
        builtins = frame.f_builtins
        for node, line, col in calls_at(frame, lasti):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else \
                func.id if isinstance(func, ast.Name) else ""
            names = OPERATIONS.get(name)
            if names is None:
                continue
            bound = _bind(node, scope, builtins, names)
            if bound is None:
                continue
            redo = _redo(bound, name, names)
            if redo is not None:
                bound["redo"] = redo
            call = Call(bound)
            for contract in OPS:
                if not contract.at("<op>", name):
                    continue
                breach = contract.check(call)
                if breach is None:
                    continue
                return contract, breach, {**_where(node, contract.argument, names, line, col),
                                          "call": call}
        return None
    except Exception:  # noqa: BLE001
        return None


def _where(node: ast.Call, argument: str, names: tuple[str, ...], line: int, col: int
           ) -> dict[str, Any]:
    """Where the offending argument and the call are written in the user's file."""
    target: ast.AST | None = None
    if argument == "self" and isinstance(node.func, ast.Attribute):
        target = node.func.value
    elif argument in names and names.index(argument) < len(node.args):
        target = node.args[names.index(argument)]
    else:
        target = next((k.value for k in node.keywords if k.arg == argument), None)

    def place(item: ast.AST, prefix: str) -> dict[str, int]:
        first = line + item.lineno - 1  # type: ignore[attr-defined]
        last = line + item.end_lineno - 1  # type: ignore[attr-defined]
        return {f"{prefix}line": first,
                f"{prefix}column": item.col_offset + (col if item.lineno == 1 else 0),  # type: ignore[attr-defined]
                f"{prefix}end_line": last,
                f"{prefix}end_column": item.end_col_offset + (  # type: ignore[attr-defined]
                    col if item.end_lineno == 1 else 0)}  # type: ignore[attr-defined]

    out = place(node, "call_")
    if target is not None:
        out.update(place(target, ""))
    return out
