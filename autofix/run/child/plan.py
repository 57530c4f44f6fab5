"""The script's own length, in the probe's steps, read from the real objects of the run.

The status line says how far the script would train ("stopping at step 60 of the script's
90"); that number must be the script's, or nothing. It is read here, once training starts:

- ``Trainer``: ``state.max_steps`` at ``on_train_begin`` (transformers computed it from
  ``max_steps``, or ``num_train_epochs`` x the update steps per epoch), times
  ``gradient_accumulation_steps``: the probe records each ``training_step``, one per
  micro-batch (:func:`trainer_total`);
- Keras ``fit``: its ``params``, ``steps`` (per epoch) x ``epochs`` (:func:`keras_total`);
- a hand-written loop, at its first optimizer step: the training ``DataLoader``'s length
  (batches per epoch; divided by the batches drawn for that first step, a gradient
  accumulation) times the ``range`` of every loop around the loop over the data, read
  from the source of the user's frames (``for epoch in range(num_epochs)``, evaluated in
  that frame). Any other enclosing loop (a ``while``, a loop over folds) makes the length
  unknown (:func:`hand_loop_total`).

0 means unknown: the status line then names no total. Standard library only.
"""

from __future__ import annotations

import ast
import linecache
import operator
from typing import Any

from .numeric import is_user_file

#: The arithmetic allowed in a ``range`` bound (``range(1, num_epochs + 1)``).
_OPERATORS: dict[type, Any] = {ast.Add: operator.add, ast.Sub: operator.sub,
                               ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv}
#: Wrappers of an epoch loop's iterable that keep its length (``tqdm(range(3))``).
_WRAPPERS = ("tqdm", "enumerate", "list")
#: How many frames out of the optimizer step are searched for the user's loops.
_DEPTH = 40


def trainer_total(args: Any, state: Any) -> int:
    """The probe steps of a ``Trainer.train()`` run to its end: ``state.max_steps`` x
    ``args.gradient_accumulation_steps`` (0 when unknown)."""
    steps = getattr(state, "max_steps", 0)
    accumulation = getattr(args, "gradient_accumulation_steps", 1)
    if not isinstance(steps, int) or steps <= 0:
        return 0
    return steps * (accumulation if isinstance(accumulation, int) and accumulation > 0 else 1)


def keras_total(params: Any) -> int:
    """The batches of a Keras ``fit`` run to its end: ``params["steps"]`` x
    ``params["epochs"]`` (0 when either is unknown, e.g. a generator without a length)."""
    if not isinstance(params, dict):
        return 0
    steps, epochs = params.get("steps"), params.get("epochs")
    if isinstance(steps, int) and isinstance(epochs, int) and steps > 0 and epochs > 0:
        return steps * epochs
    return 0


def hand_loop_total(iterator: Any, frame: Any) -> int:
    """The optimizer steps of a hand-written loop run to its end, at its first step.

    ``iterator`` is the ``DataLoader`` iterator that gave the step's batches (``len``:
    batches per epoch; ``_autofix_drawn``: the batches drawn for this first step);
    ``frame`` the frame the step was taken in, searched outward for the user's loops.
    0 when the loader has no length or a loop around the data loop is not a ``range``
    whose bounds are known, or the innermost loop is a ``range`` (a loop over step numbers
    that draws its batches itself)."""
    loops = enclosing_loops(frame)
    if not loops or _range_of(loops[0][0]) is not None:
        return 0  # no loop over the data found, or the innermost loop is a range
    per_epoch, epochs = loop_shape(iterator, loops)
    return per_epoch * epochs


def hand_loop_shape(iterator: Any, frame: Any) -> tuple[int, int]:
    """The optimizer steps per epoch and the epochs of a hand-written loop, at its first
    step: the innermost loop around ``frame`` is the epoch's (the ``DataLoader``
    ``iterator``'s length, or its ``range`` of batch offsets: ``for i in range(0, n, 32)``),
    the ``range`` loops around it are the epochs (1 when there is none). ``(0, 0)`` when
    either is unknown."""
    return loop_shape(iterator, enclosing_loops(frame))


def loop_shape(iterator: Any, loops: list[tuple[ast.AST, Any]]) -> tuple[int, int]:
    """``(steps per epoch, epochs)`` of the ``loops`` (innermost first, each with its
    frame) around a hand loop's optimizer step; ``(0, 0)`` when either is unknown."""
    if not loops:
        return 0, 0
    inner, where = loops[0]
    bounds = _range_of(inner)
    if bounds is not None:
        per_epoch = _range_length(bounds, where)
    else:
        try:
            per_epoch = len(iterator)
        except TypeError:
            return 0, 0
        drawn = getattr(iterator, "_autofix_drawn", 1)
        if isinstance(drawn, int) and drawn > 1:
            per_epoch //= drawn  # one step per `drawn` batches: gradient accumulation
    epochs = 1
    for loop, outer in loops[1:]:
        count = _range_length(_range_of(loop), outer) \
            if isinstance(loop, (ast.For, *_COMPREHENSIONS)) else 0
        if not count:
            return 0, 0
        epochs *= count
    return (per_epoch, epochs) if per_epoch > 0 else (0, 0)


def _range_length(bounds: list[ast.expr] | None, frame: Any) -> int:
    """How many values the ``range`` of ``bounds`` evaluated in ``frame`` has (0: unknown)."""
    if bounds is None:
        return 0
    values = [_value(node, frame) for node in bounds]
    if any(not isinstance(v, int) for v in values) or not 1 <= len(values) <= 3 \
            or values[2:] == [0]:
        return 0
    return len(range(*values))


#: Comprehensions, loops too (``[self.train_step(b) for b in loader]`` is a batch loop).
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def enclosing_loops(frame: Any) -> list[tuple[ast.AST, Any]]:
    """The ``for``/``while`` loops and comprehensions around the current line of each of
    the user's frames from ``frame`` outward, innermost first, each with its frame (a
    comprehension that runs in its own frame is listed once)."""
    found: list[tuple[ast.AST, Any]] = []
    seen: set[tuple[str, str, int, int]] = set()
    depth = 0
    while frame is not None and depth < _DEPTH:
        depth += 1
        path = frame.f_code.co_filename
        if is_user_file(path):
            tree = _tree(path)
            line = frame.f_lineno
            if tree is not None:
                around = [node for node in ast.walk(tree)
                          if (isinstance(node, (ast.For, ast.While, ast.AsyncFor))
                              and node.body[0].lineno <= line <= (node.end_lineno or 0)
                              or isinstance(node, _COMPREHENSIONS)
                              and node.lineno <= line <= (node.end_lineno or 0))
                          and node.lineno >= frame.f_code.co_firstlineno]
                around.sort(key=lambda node: (node.lineno, node.col_offset), reverse=True)
                for node in around:
                    key = (path, type(node).__name__, node.lineno, node.col_offset)
                    if key not in seen:
                        seen.add(key)
                        found.append((node, frame))
        frame = frame.f_back
    return found


def _tree(path: str) -> ast.AST | None:
    """The module at ``path`` as it runs (linecache holds the patched source)."""
    try:
        return ast.parse("".join(linecache.getlines(path)))
    except (SyntaxError, ValueError):
        return None


def _range_of(loop: ast.AST) -> list[ast.expr] | None:
    """The arguments of the ``range(...)`` (or ``trange``) a ``for`` loop iterates, through
    length-keeping wrappers; ``None`` when it iterates something else."""
    node = loop.generators[0].iter if isinstance(loop, _COMPREHENSIONS) else \
        getattr(loop, "iter", None)
    while isinstance(node, ast.Call):
        name = _callee(node.func)
        if name in ("range", "trange"):
            return list(node.args) if not node.keywords else None
        if name in _WRAPPERS and node.args:
            node = node.args[0]
            continue
        return None
    return None


def _callee(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else \
        func.attr if isinstance(func, ast.Attribute) else ""


def _value(node: ast.expr, frame: Any) -> Any:
    """A ``range`` bound evaluated in ``frame``: literals, names, attributes, ``+ - * //``,
    unary minus, ``int(...)`` and ``len(...)``; ``None`` for anything else."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        scope = frame.f_locals if node.id in frame.f_locals else frame.f_globals
        return scope.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _value(node.value, frame)
        return getattr(base, node.attr, None) if base is not None else None
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _value(node.left, frame), _value(node.right, frame)
        if isinstance(left, int) and isinstance(right, int) and \
                not (isinstance(node.op, ast.FloorDiv) and right == 0):
            return _OPERATORS[type(node.op)](left, right)
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _value(node.operand, frame)
        return -inner if isinstance(inner, int) else None
    if isinstance(node, ast.Call) and _callee(node.func) in ("int", "len") \
            and len(node.args) == 1 and not node.keywords:
        inner = _value(node.args[0], frame)
        try:
            return int(inner) if _callee(node.func) == "int" else len(inner)
        except (TypeError, ValueError):
            return None
    return None
