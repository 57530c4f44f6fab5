"""What the recipes of a hand loop's training step share (``add-zero-grad``,
``zero-grad-before-step``, ``scheduler-step-per-epoch``, ``scheduler-step-per-batch``,
``add-eval-mode``): the place the run named, the optimizer and scheduler a ``.step()`` is
called on, whether a statement trains, the loop around a statement, and where the top of
a training step is (before its forward).

Not a recipe (the registry skips modules whose name starts with ``_``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import libcst as cst
import libcst.matchers as m
from libcst.helpers import get_full_name_for_node

from autofix.toolkit import NotApplicable, code
from autofix.toolkit.operators import insert_statement
from autofix.toolkit.scope import PlannedEdits, Program
from autofix.toolkit.statements import method_call

#: The classes of ``torch.optim`` (2.x) and the usual third-party optimizers.
OPTIMIZERS = frozenset({
    "SGD", "Adam", "AdamW", "Adamax", "Adadelta", "Adagrad", "ASGD", "LBFGS", "NAdam",
    "RAdam", "RMSprop", "Rprop", "SparseAdam", "Adafactor", "Lion", "Adam8bit", "AdamW8bit",
})
#: Calls that only move or reshape data (``batch = {k: v.to(device) ...}``): statements
#: made of them prepare a step's batch, they are not its forward.
DATA_CALLS = frozenset({
    "to", "cuda", "cpu", "float", "long", "int", "half", "double", "bfloat16", "view",
    "reshape", "squeeze", "unsqueeze", "permute", "transpose", "contiguous", "flatten",
    "items", "keys", "values", "get", "size", "numel", "len", "dict", "list", "tuple", "zip",
    "enumerate", "range", "next", "iter", "isinstance", "train", "pop",
})


def in_file(recipe: PlannedEdits, place: Mapping[str, Any]) -> bool:
    """``place``'s ``file`` (relative to the repository, or absolute) is the file
    ``recipe`` edits (an example's relative script by its name)."""
    file = str(place.get("file") or "")
    script = Path(recipe.rc.script)
    if not file:
        return False
    if not script.is_absolute():
        return Path(file).name == script.name
    if Path(file).is_absolute():
        try:
            return Path(file).resolve() == script.resolve()
        except OSError:
            return False
    return script.as_posix().endswith("/" + Path(file).as_posix())


def receiver(stmt: cst.CSTNode, method: str) -> str | None:
    """The receiver's code of a statement ``RECEIVER.method()`` (no arguments) alone on its
    line, the receiver a name or an attribute chain (``optimizer``, ``self.scheduler``)."""
    if not isinstance(stmt, cst.BaseStatement):
        return None
    call = method_call(stmt, method)
    if call is None or call.args or not isinstance(call.func, cst.Attribute) or \
            not m.matches(call.func.value, m.Name() | m.Attribute()):
        return None
    return code(call.func.value)


def _callee_made(tree: cst.Module, target: str) -> list[str]:
    """The last names of the callees whose result ``target`` (a name or ``self.x``) is
    assigned from anywhere in ``tree``."""
    out = []
    for assign in m.findall(tree, m.Assign(value=m.Call())):
        assert isinstance(assign, cst.Assign) and isinstance(assign.value, cst.Call)
        if any(code(t.target) == target for t in assign.targets):
            out.append((get_full_name_for_node(assign.value.func) or "").rsplit(".", 1)[-1])
    return out


def is_optimizer(tree: cst.Module, target: str) -> bool:
    """Whether ``target`` is assigned from an optimizer class (:data:`OPTIMIZERS`, or a
    callable whose last name says ``Optimizer``/``optim``), or named as one (``opt``,
    ``optimizer``, ``self.optimizer``: a parameter given the optimizer)."""
    if target.rsplit(".", 1)[-1].lower().startswith("opt"):
        return True
    return any(c in OPTIMIZERS or "optimizer" in c.lower() or c.lower().startswith("optim")
               for c in _callee_made(tree, target))


def is_scheduler(tree: cst.Module, target: str) -> bool:
    """Whether ``target`` is an lr scheduler: assigned from a ``torch.optim.lr_scheduler``
    class (a name ending in ``LR``) or a schedule maker (``get_*_schedule*``), or named as
    one (``scheduler``, ``sched``, ``lr_scheduler``); never an optimizer."""
    if is_optimizer(tree, target):
        return False
    if "sched" in target.rsplit(".", 1)[-1].lower():
        return True
    return any(c.endswith("LR") or "schedule" in c.lower() for c in _callee_made(tree, target))


def trains(program: Program, node: cst.CSTNode, depth: int = 0) -> bool:
    """Whether ``node`` calls ``backward()`` or a ``step()``, itself or through a function
    or method of the module it calls (two levels deep)."""
    if m.findall(node, m.Call(func=m.Attribute(attr=m.Name("backward") | m.Name("step")))):
        return True
    if depth >= 2:
        return False
    for call in m.findall(node, m.Call()):
        assert isinstance(call, cst.Call)
        func = program.function_called(call)
        if func is not None and func is not node and trains(program, func, depth + 1):
            return True
    return False


def statement_at(recipe: PlannedEdits, line: int, method: str) -> cst.SimpleStatementLine | None:
    """The statement ``X.method()`` (:func:`receiver`) that starts at ``line``."""
    for stmt in m.findall(recipe.program.tree, m.SimpleStatementLine()):
        if recipe.program.line(stmt) == line and receiver(stmt, method) is not None:
            assert isinstance(stmt, cst.SimpleStatementLine)
            return stmt
    return None


def loop_of(program: Program, node: cst.CSTNode) -> cst.For | cst.While | None:
    """The innermost ``for``/``while`` loop around ``node`` in its own function."""
    for anc in program.ancestors(node):
        if isinstance(anc, (cst.For, cst.While)):
            return anc
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef)):
            return None
    return None


def calls_backward(stmt: cst.CSTNode) -> bool:
    return bool(m.findall(stmt, m.Call(func=m.Attribute(attr=m.Name("backward")))))


def _prepares(stmt: cst.BaseStatement) -> bool:
    """A statement that only prepares a step's batch or mode: assignments whose calls all
    move or reshape data (:data:`DATA_CALLS`), ``model.train()``, a docstring."""
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    for small in stmt.body:
        if isinstance(small, cst.Expr):
            if isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
                continue
            if receiver(stmt, "train") is not None:
                continue
            return False
        if not isinstance(small, (cst.Assign, cst.AnnAssign)):
            return False
        for call in m.findall(small, m.Call()):
            assert isinstance(call, cst.Call)
            name = (get_full_name_for_node(call.func) or "").rsplit(".", 1)[-1]
            if name not in DATA_CALLS:
                return False
    return True


def step_top(body: Sequence[cst.BaseStatement], backward: int) -> int:
    """The index in ``body`` where a training step starts, its ``backward()`` at index
    ``backward``: the first statement that is not batch preparation (:func:`_prepares`),
    which is the forward or the backward itself."""
    for i, stmt in enumerate(body[:backward]):
        if not _prepares(stmt):
            return i
    return backward


def move_statement(recipe: PlannedEdits, stmt: cst.SimpleStatementLine, anchor: cst.CSTNode,
                   why: str, *, before: bool = False, text: str = "") -> None:
    """Plan ``stmt`` moved next to ``anchor`` (after it, or ``before``), a statement of
    another block: removed from its own block (which must keep another statement) and
    inserted with the anchor's indentation, its own comment kept (or as ``text``: the
    statement in the anchor's names)."""
    holder = recipe.program.parent(stmt)
    if not isinstance(holder, (cst.IndentedBlock, cst.Module)) or len(holder.body) < 2:
        raise NotApplicable(f"{code(stmt).strip()} is alone in its block")
    if not isinstance(anchor, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        raise NotApplicable("no statement to move it next to")
    index = list(holder.body).index(stmt)

    def remove(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, (cst.IndentedBlock, cst.Module))
        body = list(node.body)
        del body[index]
        return node.with_changes(body=body)

    recipe.plan_edit(holder, remove, why)
    text = text or code(stmt.with_changes(leading_lines=())).strip()
    insert_statement(recipe, anchor, text, why, before=before)


#: Comprehensions: a batch loop too (``[self.train_step(b) for b in loader]``).
COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def batch_loop_at(program: Program, node: cst.CSTNode) -> cst.BaseStatement | None:
    """The statement of ``node``'s own function that loops over the batches around it: the
    innermost ``for``/``while`` loop, or the statement holding a comprehension around it."""
    for anc in program.ancestors(node):
        if isinstance(anc, (cst.For, cst.While)):
            return anc
        if isinstance(anc, COMPREHENSIONS):
            return next((a for a in program.ancestors(anc)
                         if isinstance(a, cst.SimpleStatementLine)), None)
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return None
    return None


def at_call_site(program: Program, func: cst.FunctionDef, call: cst.Call, expr: str
                 ) -> str | None:
    """``expr`` (a name or attribute chain inside ``func``) as the caller at ``call`` names
    it: a parameter replaced by the argument given for it, ``self.x`` kept when the caller
    is a method of the same class, a global kept; ``None`` when it cannot be named."""
    root, _, rest = expr.partition(".")
    params = [p.name.value for p in (*func.params.posonly_params, *func.params.params,
                                     *func.params.kwonly_params)]
    if root == "self":
        holder = program.parent(func)
        owner = program.parent(holder) if holder is not None else None
        same = isinstance(owner, cst.ClassDef) and program.class_of(call) is owner
        return expr if same else None
    if root not in params:
        return expr
    given = program.bound(func, call, root)
    if given is None or not m.matches(given, m.Name() | m.Attribute()):
        return None
    return code(given) + (f".{rest}" if rest else "")
