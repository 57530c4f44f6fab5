"""Edit operators shared by recipes: each plans one kind of change on a
:class:`~autofix.toolkit.scope.PlannedEdits` recipe, typed and tested once.

- settings of a call or a parsed command line: :meth:`Owner.set` / :meth:`Owner.remove` of
  the value-source service (:mod:`autofix.toolkit.values`);
- :func:`insert_statement`: a statement before or after an anchor statement, in the block
  that holds it (``optimizer.zero_grad()``, ``model.eval()``), indentation taken from it;
- :func:`narrow_receiver`: ``model.parameters()`` -> ``model.base_model.parameters()``:
  a call's receiver narrowed to one of its attributes (a freeze loop's target);
- :func:`frozen_loop_variable`: the loop shape the freeze recipes read
  (``for p in m.parameters(): p.requires_grad = False``);
- :func:`cast_at_source`: an array's element type changed where the array is made
  (``np.zeros(..., dtype=np.int64)`` -> ``dtype=np.float32``), followed back from where it
  is used (``labels=multi_hot.tolist()``);
- scaling a number along a ladder (a learning rate /10, /100, ...): the candidates of
  :meth:`~autofix.toolkit.scope.PlannedEdits.choose`, one rung each
  (``recipes/divergence/divide_lr.py``).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.metadata import PositionProvider

from autofix.toolkit.edits import code
from autofix.toolkit.insert import Statement, parse_statement
from autofix.toolkit.scope import PlannedEdits

#: The methods of ``nn.Module`` whose result a freeze loop walks.
PARAMETER_METHODS = ("parameters", "named_parameters")


def insert_statement(recipe: PlannedEdits, anchor: Statement, text: str, why: str, *,
                     before: bool = True) -> None:
    """Plan ``text`` (one statement of code) inserted before (or after) ``anchor``, in the
    indented block or module that holds it, with the block's indentation; several
    insertions into one block keep their anchors' order. Raises ``ValueError`` when
    ``anchor`` is not a statement of an indented block or module body (a one-line
    ``if x: y`` body). The fix's line (``first_line``) is the anchor's."""
    holder = recipe.program.parent(anchor)
    if not isinstance(holder, (cst.IndentedBlock, cst.Module)):
        raise ValueError(f"{code(anchor).strip()[:40]} is not in an indented block")
    index = list(holder.body).index(anchor)
    if not recipe.first_line:  # the fix's line is the anchor's, not its block's first
        recipe.first_line = recipe.get_metadata(PositionProvider, anchor).start.line
    pending = recipe.insertions.get(holder)
    if pending is None:
        pending = recipe.insertions[holder] = []

        def edit(node: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(node, (cst.IndentedBlock, cst.Module))
            body: list[cst.CSTNode] = []
            for i, stmt in enumerate(node.body):
                body += [s for at, first, s in pending if at == i and first]
                body.append(stmt)
                body += [s for at, first, s in pending if at == i and not first]
            return node.with_changes(body=body)

        recipe.plan_edit(holder, edit, why)
    else:
        recipe.changed(holder, why)
    pending.append((index, before, parse_statement(text)))


def narrow_receiver(recipe: PlannedEdits, call: cst.Call, attr: str, why: str) -> str:
    """Plan ``x.method(...)`` -> ``x.<attr>.method(...)`` (``attr`` may be dotted) and
    return the new receiver's code. Raises ``ValueError`` when ``call`` is not a method
    call."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        raise ValueError(f"{code(call)[:40]} is not a method call")
    receiver: cst.BaseExpression = func.value
    for part in attr.split("."):
        receiver = cst.Attribute(value=receiver, attr=cst.Name(part))
    new_receiver = receiver

    def edit(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Attribute)
        return node.with_changes(value=new_receiver)

    recipe.plan_edit(func, edit, why)
    return code(new_receiver)


def frozen_loop_variable(loop: cst.For) -> str | None:
    """The loop variable a loop's only statement freezes (``p.requires_grad = False`` or
    ``p.requires_grad_(False)``; ``for name, p in ...`` too), else ``None``: a loop that
    freezes some parameters only (an ``if``) or does more is not this shape."""
    target: cst.BaseExpression = loop.target
    if isinstance(target, cst.Tuple) and len(target.elements) == 2:
        target = target.elements[1].value
    if not isinstance(target, cst.Name) or not isinstance(loop.body, cst.IndentedBlock) \
            or len(loop.body.body) != 1 or loop.orelse is not None:
        return None
    line = loop.body.body[0]
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    stmt = line.body[0]
    name = target.value
    if m.matches(stmt, m.Assign(targets=[m.AssignTarget(target=m.Attribute(
            value=m.Name(name), attr=m.Name("requires_grad")))], value=m.Name("False"))):
        return name
    if m.matches(stmt, m.Expr(value=m.Call(
            func=m.Attribute(value=m.Name(name), attr=m.Name("requires_grad_")),
            args=[m.Arg(value=m.Name("False"))]))):
        return name
    return None


def parameter_loop_call(loop: cst.For) -> cst.Call | None:
    """The ``x.parameters()`` / ``x.named_parameters()`` call a loop walks, if it walks
    one."""
    it = loop.iter
    if isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and \
            it.func.attr.value in PARAMETER_METHODS:
        return it
    return None


#: Integer element types and the float type each becomes (numpy, torch, Python, strings).
FLOAT_OF = {"int64": "float32", "int32": "float32", "int16": "float32", "int8": "float32",
            "uint8": "float32", "int_": "float32", "intc": "float32", "long": "float",
            "int": "float"}
#: Methods and functions that keep an array's element type (``x.tolist()``, ``list(x)``):
#: a value made by one of them is followed to its receiver or argument.
SAME_DTYPE_METHODS = ("tolist", "copy", "clone", "numpy", "cpu", "reshape", "view", "squeeze",
                      "unsqueeze", "flatten", "T")
SAME_DTYPE_FUNCTIONS = ("list", "tuple", "np.asarray", "numpy.asarray", "np.array",
                        "numpy.array", "torch.as_tensor", "torch.tensor")


def cast_at_source(recipe: PlannedEdits, expr: cst.BaseExpression, why: str) -> str | None:
    """Plan the integer ``dtype=`` of the call that makes ``expr``'s array changed to its
    float type (:data:`FLOAT_OF`: ``np.int64`` -> ``np.float32``, ``torch.long`` ->
    ``torch.float``, ``int`` -> ``float``, ``"int64"`` -> ``"float32"``), following
    ``expr`` through the module's assignments and the calls that keep an element type
    (:data:`SAME_DTYPE_METHODS`, :data:`SAME_DTYPE_FUNCTIONS`). Returns the new ``dtype=``
    value's code, or ``None`` when no such call is found (or its dtype is not an integer
    type: nothing is planned). ``why`` describes the edit; ``{dtype}`` in it is replaced by
    the new value's code."""
    found = _dtype_arg(recipe, expr, 0, set())
    if found is None:
        return None
    new = _float_dtype(found.value)
    if new is None:
        return None

    def edit(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Arg)
        return node.with_changes(value=new)

    recipe.plan_edit(found, edit, why.replace("{dtype}", code(new)))
    return code(new)


def _dtype_arg(recipe: PlannedEdits, expr: cst.BaseExpression, depth: int,
               seen: set[cst.CSTNode]) -> cst.Arg | None:
    if depth > 6 or expr in seen:
        return None
    seen.add(expr)
    for value in recipe.program.values(expr):
        if not isinstance(value, cst.Call):
            continue
        given = next((a for a in value.args if a.keyword and a.keyword.value == "dtype"), None)
        if given is not None:
            return given
        func = value.func
        if isinstance(func, cst.Attribute) and func.attr.value in SAME_DTYPE_METHODS:
            found = _dtype_arg(recipe, func.value, depth + 1, seen)
        elif code(func) in SAME_DTYPE_FUNCTIONS and value.args:
            found = _dtype_arg(recipe, value.args[0].value, depth + 1, seen)
        else:
            continue
        if found is not None:
            return found
    return None


def _float_dtype(dtype: cst.BaseExpression) -> cst.BaseExpression | None:
    """The float counterpart of an integer element type expression, else ``None``."""
    if isinstance(dtype, cst.Name) and dtype.value in FLOAT_OF:
        return cst.Name(FLOAT_OF[dtype.value])
    if isinstance(dtype, cst.Attribute) and dtype.attr.value in FLOAT_OF:
        return dtype.with_changes(attr=cst.Name(FLOAT_OF[dtype.attr.value]))
    if isinstance(dtype, cst.SimpleString):
        text = dtype.value[1:-1] if dtype.value[:1] in "'\"" else ""
        if text in FLOAT_OF:
            quote = dtype.value[0]
            return cst.SimpleString(f"{quote}{FLOAT_OF[text]}{quote}")
    return None


__all__ = ["FLOAT_OF", "PARAMETER_METHODS", "SAME_DTYPE_FUNCTIONS", "SAME_DTYPE_METHODS",
           "cast_at_source", "frozen_loop_variable", "insert_statement", "narrow_receiver",
           "parameter_loop_call"]
