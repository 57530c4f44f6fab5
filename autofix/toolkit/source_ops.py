"""Repair operators that establish a broken property where the script makes the value:
the candidates of a verified search (:meth:`~autofix.toolkit.scope.PlannedEdits.choose`,
each run by the engine until one passes the fault's proof).

Each operator reads the provenance of the offending value (:class:`Origin` chains of
:mod:`autofix.toolkit.provenance`, from the use to where it is made), walks each chain from
its source end, and offers an :class:`~autofix.toolkit.scope.Option` at every point that
makes the property, nearest the producer first (a cast also where numpy becomes torch, then
at the use). The engine runs them in that order; the first that passes its run is kept.

- :func:`trailing_axis_options` (``drop-trailing-axis``): a column selected as a table
  (``df[["label"]]`` -> ``df["label"]``), an axis added (``reshape(-1, 1)``,
  ``unsqueeze(-1)``, ``x[:, None]``, ``np.expand_dims``, ``[[v] for v in ...]``,
  ``torch.tensor([label])``) dropped where it is added;
- :func:`cast_options` (``cast-int64``, ``cast-float32``, ``cast-bool``): the element
  type made the one
  the call needs where the array or tensor is made: ``dtype=`` of a numpy or torch maker
  (``np.zeros(...)`` -> ``np.zeros(..., dtype=np.int64)``), a legacy constructor
  (``torch.FloatTensor`` -> ``torch.LongTensor``), a cast method (``.float()`` ->
  ``.long()``), ``.astype(...)``; else a cast on the tensor maker (``torch.from_numpy(x)
  .long()``), or at the use;
- :func:`loader_options` (``drop-last-batch``): ``drop_last=True`` on the ``DataLoader``
  call that builds the loader, found from the name a user's frame held it under;
  :func:`trainer_options`: ``dataloader_drop_last=True`` in a ``Trainer``'s arguments;
- :func:`device_options` (``move-to-device``): the batch a loop takes moved to the
  model's device at the top of the loop's body.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from autofix.toolkit import patterns
from autofix.toolkit.edits import code
from autofix.toolkit.operators import insert_statement
from autofix.toolkit.provenance import Origin, Provenance
from autofix.toolkit.scope import Option, PlannedEdits, replace_with
from autofix.toolkit.values import NotFollowed, Owner, Values

#: What each target element type is called by numpy, by torch, as a cast method and as a
#: legacy constructor.
DTYPES = {
    "int64": {"numpy": "int64", "torch": "long", "method": "long", "legacy": "LongTensor"},
    "float32": {"numpy": "float32", "torch": "float32", "method": "float",
                "legacy": "FloatTensor"},
    "bool": {"numpy": "bool_", "torch": "bool", "method": "bool", "legacy": "BoolTensor"},
}
#: Cast methods of tensors, replaced by the target's (``.float()`` -> ``.long()``).
CAST_METHODS = ("float", "double", "half", "long", "int", "short", "bfloat16", "bool")
#: Most options offered per operator (the engine runs at most 4).
MAX_OPTIONS = 4


def _in_tree(recipe: PlannedEdits, node: cst.CSTNode) -> bool:
    return recipe.program.parent(node) is not None or node is recipe.program.tree


def _label(recipe: PlannedEdits, node: cst.CSTNode, text: str) -> str:
    line = recipe.program.line(node)
    return f"{text} (line {line})" if line else text


def _plan(recipe: PlannedEdits, node: cst.CSTNode, new: cst.CSTNode, why: str
          ) -> Callable[[], None]:
    return lambda: recipe.plan_edit(node, replace_with(new), why)


#: Expressions a method call binds tighter than (``(1 - m).bool()``, not ``1 - m.bool()``).
_LOOSE = (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.BooleanOperation,
          cst.IfExp, cst.Lambda, cst.Await, cst.NamedExpr)


def _method_call(value: cst.BaseExpression, method: str, *args: cst.Arg) -> cst.Call:
    if isinstance(value, _LOOSE) and not value.lpar:
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Call(func=cst.Attribute(value=value, attr=cst.Name(method)), args=args)


def _dedupe(options: list[tuple[cst.CSTNode, Option]]) -> list[Option]:
    seen: set[int] = set()
    out: list[Option] = []
    for node, option in options:
        if id(node) in seen:
            continue
        seen.add(id(node))
        out.append(option)
    return out[:MAX_OPTIONS]


# -- drop-trailing-axis ----------------------------------------------------------------


def _drops_axis(recipe: PlannedEdits, node: cst.CSTNode) -> cst.BaseExpression | None:
    """``node`` without the trailing axis of 1 it adds, ``None`` when it adds none."""
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 \
            and isinstance(node.slice[0].slice, cst.Index):
        inner = node.slice[0].slice.value
        if isinstance(inner, (cst.List, cst.Tuple)) and len(inner.elements) == 1 \
                and isinstance(inner.elements[0].value, cst.SimpleString):
            return node.with_changes(slice=[cst.SubscriptElement(cst.Index(
                inner.elements[0].value))])  # df[["label"]] -> df["label"]
    if isinstance(node, cst.Subscript) and any(
            isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.Name)
            and e.slice.value.value == "None" for e in node.slice) and len(node.slice) == 2:
        return node.value  # x[:, None] -> x
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        method, args = node.func.attr.value, node.args
        if method in ("reshape", "view") and len(args) >= 2 and code(args[-1].value) == "1":
            kept = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) if i == len(args) - 2
                    else a for i, a in enumerate(args[:-1])]
            return node.with_changes(args=kept)
        if method == "unsqueeze" and len(args) == 1 and code(args[0].value) in ("-1", "1"):
            return node.func.value
    if isinstance(node, cst.Call) and recipe.is_qualified(node.func, patterns.NUMPY_EXPAND_DIMS) \
            and len(node.args) == 2 and code(node.args[1].value) in ("-1", "1"):
        return node.args[0].value
    if isinstance(node, cst.ListComp) and isinstance(node.elt, cst.List) \
            and len(node.elt.elements) == 1:
        return node.with_changes(elt=node.elt.elements[0].value)  # [[v] for v in ys]
    if isinstance(node, cst.Call) and recipe.is_qualified(node.func, patterns.TORCH_MAKERS) \
            and node.args and isinstance(node.args[0].value, cst.List) \
            and len(node.args[0].value.elements) == 1 and node.args[0].keyword is None:
        item = node.args[0].value.elements[0].value  # torch.tensor([label]) per row
        return node.with_changes(args=[node.args[0].with_changes(value=item),
                                       *node.args[1:]])
    return None


def _one_axis(node: cst.CSTNode) -> bool:
    """``node`` already makes its value one axis less (``.squeeze(-1)``, ``.view(-1)``,
    ``.reshape(-1)``, ``.flatten()``, ``.ravel()``, ``x[:, 0]``)."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        method, args = node.func.attr.value, [code(a.value) for a in node.args]
        return (method == "squeeze" and args in ([], ["-1"], ["1"])) or (
            method in ("view", "reshape") and args == ["-1"]) or method in ("flatten", "ravel")
    return isinstance(node, cst.Subscript) and len(node.slice) == 2 \
        and code(node.slice[1].slice) in ("0", "-1")


def trailing_axis_options(recipe: PlannedEdits, origins: list[Origin]) -> list[Option]:
    """Candidates that drop a trailing axis of 1 where the script adds it (see the module
    docstring), nearest the producer first. Only a place that visibly adds the axis is a
    candidate: a squeeze at the tensor maker or at the use would hide where the axis comes
    from, and could not tell a fixed chain from one still broken. None when every chain
    already drops such an axis (the breach is not this value's)."""
    open_chains = [o for o in origins if not any(_one_axis(n) for n in o.via)]
    if origins and not open_chains:
        recipe.reason = "the value is made one axis already where the script makes it"
        return []
    found: list[tuple[cst.CSTNode, Option]] = []
    for origin in open_chains:
        for node in reversed(origin.via):
            new = _drops_axis(recipe, node) if _in_tree(recipe, node) else None
            if new is not None:
                text = f"{code(new)} (not {code(node)}): one axis, as the loss takes it"
                found.append((node, Option(_label(recipe, node, code(new)),
                                           _plan(recipe, node, new, text))))
                break
    return _dedupe(found)


# -- cast-int64 / cast-float32 ----------------------------------------------------------


def _alias(call: cst.Call) -> str:
    """The module name a call reaches its library through (``np`` in ``np.zeros``)."""
    func: cst.BaseExpression = call.func
    while isinstance(func, cst.Attribute):
        func = func.value
    return func.value if isinstance(func, cst.Name) else ""


def _dtype_expr(module: str, name: str) -> cst.BaseExpression:
    return cst.Attribute(value=cst.Name(module), attr=cst.Name(name))


def _with_dtype(call: cst.Call, dtype: cst.BaseExpression) -> cst.Call:
    args = list(call.args)
    for i, arg in enumerate(args):
        if arg.keyword is not None and arg.keyword.value == "dtype":
            args[i] = arg.with_changes(value=dtype)
            return call.with_changes(args=args)
    if args:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(
            " ")))
    args.append(cst.Arg(value=dtype, keyword=cst.Name("dtype"),
                        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                              whitespace_after=cst.SimpleWhitespace(""))))
    return call.with_changes(args=args)


def _cast_at(recipe: PlannedEdits, node: cst.CSTNode, target: str
             ) -> cst.BaseExpression | None:
    """``node`` made in the element type ``target`` where it makes its value, ``None``
    when ``node`` makes none (or already that type)."""
    names = DTYPES[target]
    if not isinstance(node, cst.Call):
        return None
    func = node.func
    if recipe.is_qualified(func, patterns.NUMPY_MAKERS):
        return _with_dtype(node, _dtype_expr(_alias(node), names["numpy"]))
    if recipe.is_qualified(func, patterns.NUMPY_DRAWS):
        return _method_call(node, "astype", cst.Arg(_dtype_expr(_alias(node), names["numpy"])))
    numpy = _numpy_alias(recipe)
    if numpy and _generator_draw(recipe, node):
        return _method_call(node, "astype", cst.Arg(_dtype_expr(numpy, names["numpy"])))
    if recipe.is_qualified(func, patterns.TORCH_MAKERS):
        return _with_dtype(node, _dtype_expr(_alias(node), names["torch"]))
    if recipe.is_qualified(func, patterns.TORCH_LEGACY) and isinstance(func, cst.Attribute) \
            and func.attr.value != names["legacy"]:
        return node.with_changes(func=func.with_changes(attr=cst.Name(names["legacy"])))
    if isinstance(func, cst.Attribute) and func.attr.value in CAST_METHODS and not node.args:
        if func.attr.value == names["method"]:
            return None
        return node.with_changes(func=func.with_changes(attr=cst.Name(names["method"])))
    if isinstance(func, cst.Attribute) and func.attr.value == "astype" and len(node.args) == 1:
        arg = node.args[0].value
        module = arg.value.value if isinstance(arg, cst.Attribute) \
            and isinstance(arg.value, cst.Name) else "np"
        return node.with_changes(args=[cst.Arg(_dtype_expr(module, names["numpy"]))])
    return None


def _made_as(recipe: PlannedEdits, node: cst.CSTNode, target: str) -> bool:
    """``node`` already makes its value in the element type ``target``."""
    names = DTYPES[target]
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    wanted = {names["numpy"], names["torch"], names["method"]} | (
        {"float", "float32"} if target == "float32" else {"int64", "long"}
        if target == "int64" else {"bool"})
    dtype = next((a.value for a in node.args if a.keyword and a.keyword.value == "dtype"),
                 None)
    if dtype is not None:
        return code(dtype).rsplit(".", 1)[-1].strip("'\"") in wanted
    if isinstance(func, cst.Attribute) and func.attr.value in (names["method"], names["legacy"]):
        return not node.args or func.attr.value == names["legacy"]
    if isinstance(func, cst.Attribute) and func.attr.value in ("astype", "to") and node.args:
        return code(node.args[0].value).rsplit(".", 1)[-1].strip("'\"") in wanted
    return False


def _numpy_alias(recipe: PlannedEdits) -> str:
    """The name the module imports numpy under (``np``), "" when it does not."""
    for node in recipe.program.tree.body:
        if not isinstance(node, cst.SimpleStatementLine):
            continue
        for small in node.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    if code(alias.name) == "numpy":
                        return code(alias.asname.name) if alias.asname else "numpy"
    return ""


def _generator_draw(recipe: PlannedEdits, call: cst.Call) -> bool:
    """``rng.normal(...)``: a draw of a numpy random generator the module makes."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
        return False
    return any(isinstance(value, cst.Call) and recipe.is_qualified(value.func,
                                                                   patterns.NUMPY_GENERATOR)
               for _, value in recipe.program.assigned_values(func.value.value, call))


def cast_options(recipe: PlannedEdits,
                 starts: list[tuple[cst.BaseExpression | None, list[Origin]]],
                 target: str) -> list[Option]:
    """Candidates that make the value's element type ``target`` (``"int64"`` or
    ``"float32"``) where it is made (see the module docstring), for every place the value
    is used from (``starts``: a use and its origins): first where each chain makes the
    value, then where numpy becomes torch, then at each use. None when every chain already
    makes it so (the breach is not this value's)."""
    names = DTYPES[target]
    for use, _ in starts:
        parent = recipe.program.parent(use) if use is not None else None
        if isinstance(parent, cst.Attribute) and parent.value is use \
                and parent.attr.value == names["method"] \
                and isinstance(recipe.program.parent(parent), cst.Call):
            recipe.reason = f"the value is cast to {target} where the call uses it already"
            return []
    origins = [o for _, chain in starts for o in chain]
    open_chains = [o for o in origins if not any(_made_as(recipe, n, target) for n in o.via)]
    if origins and not open_chains:
        recipe.reason = f"the value is made as {target} already where the script makes it"
        return []
    found: list[tuple[cst.CSTNode, Option]] = []
    for origin in open_chains:
        for node in reversed(origin.via):
            new = _cast_at(recipe, node, target) if _in_tree(recipe, node) else None
            if new is not None:
                text = f"{code(new)[:70]}: made as {target} where it is made"
                found.append((node, Option(_label(recipe, node, code(new)[:60]),
                                           _plan(recipe, node, new, text))))
                break
    for origin in open_chains:
        for node in reversed(origin.via):
            if _in_tree(recipe, node) and isinstance(node, cst.Call) \
                    and recipe.is_qualified(node.func, patterns.TORCH_FROM_NUMPY):
                new = _method_call(node, names["method"])
                found.append((node, Option(_label(recipe, node, code(new)[:60]),
                                           _plan(recipe, node, new, f"{code(new)[:70]}: "
                                                 f"{target} where the tensor is made"))))
                break
    for use, chain in starts:
        if use is not None and _in_tree(recipe, use) and (not chain or any(
                o in open_chains for o in chain)):
            new = _method_call(use, names["method"])
            found.append((use, Option(_label(recipe, use, code(new)),
                                      _plan(recipe, use, new, f"{code(new)} at the call"))))
    return _dedupe(found)


# -- channels-first / add-channel-axis / materialise-params -------------------------------


def method_options(recipe: PlannedEdits,
                   starts: list[tuple[cst.BaseExpression | None, list[Origin]]],
                   method: str, args: tuple[int, ...], why: str) -> list[Option]:
    """Candidates that apply ``.method(*args)`` to the value (``.permute(0, 3, 1, 2)``,
    ``.unsqueeze(1)``): where a tensor maker of each chain makes it, nearest the producer
    first, then at each use. None when a chain already applies it."""
    def established(node: cst.CSTNode) -> bool:
        return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
            and node.func.attr.value == method
    origins = [o for _, chain in starts for o in chain]
    if any(established(n) for o in origins for n in o.via):
        recipe.reason = f"the value goes through .{method}(...) already"
        return []
    arguments = [cst.Arg(cst.Integer(str(a)) if a >= 0 else
                         cst.UnaryOperation(cst.Minus(), cst.Integer(str(-a)))) for a in args]
    found: list[tuple[cst.CSTNode, Option]] = []
    makers = (patterns.TORCH_MAKERS, patterns.TORCH_FROM_NUMPY)
    places: list[cst.BaseExpression] = [
        n for o in origins for n in reversed(o.via)
        if isinstance(n, cst.Call) and _in_tree(recipe, n)
        and any(recipe.is_qualified(n.func, p) for p in makers)]
    places += [use for use, _ in starts if use is not None and _in_tree(recipe, use)]
    for node in places:
        assert isinstance(node, cst.BaseExpression)
        new = _method_call(node, method, *arguments)
        found.append((node, Option(_label(recipe, node, code(new)[:60]),
                                   _plan(recipe, node, new, f"{code(new)[:70]}: {why}"))))
    return _dedupe(found)


def list_options(recipe: PlannedEdits, origins: list[Origin]) -> list[Option]:
    """``list(model.parameters())`` where a generator of parameters is made, so that every
    reader gets all of them."""
    found: list[tuple[cst.CSTNode, Option]] = []
    for origin in origins:
        node = origin.node
        if any(isinstance(n, cst.Call) and recipe.is_qualified(n.func, patterns.LIST_OR_TUPLE)
               for n in origin.via):
            recipe.reason = "the parameters are made a list already"
            continue
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value in PARAMETER_GENERATORS and _in_tree(recipe, node):
            new = cst.Call(func=cst.Name("list"), args=[cst.Arg(node)])
            found.append((node, Option(_label(recipe, node, code(new)[:60]), _plan(
                recipe, node, new, f"{code(new)[:70]}: a list every reader gets in full"))))
    return _dedupe(found)


#: Methods of ``nn.Module`` that return a generator of its parameters.
PARAMETER_GENERATORS = ("parameters", "named_parameters", "buffers")


# -- drop-last-batch -------------------------------------------------------------------


def loader_options(recipe: PlannedEdits, provenance: Provenance,
                   loader: cst.BaseExpression) -> list[Option]:
    """``drop_last=True`` on each ``DataLoader(...)`` call the loader ``loader`` (the
    user's expression for it) is built by; one option per call."""
    values = Values(recipe)
    options: list[Option] = []
    for origin in provenance.origins(loader):
        node = origin.node
        if not isinstance(node, cst.Call) or not recipe.is_qualified(node.func,
                                                                      patterns.DATALOADER):
            continue
        owner = values.owners_of(node, patterns.DATALOADER)
        if not owner:
            continue

        options.append(Option(_label(recipe, node, "DataLoader(..., drop_last=True)"),
                              _set_drop_last(recipe, owner[0])))
    return options[:MAX_OPTIONS]


def trainer_options(recipe: PlannedEdits, provenance: Provenance,
                    trainer: cst.BaseExpression) -> list[Option]:
    """``dataloader_drop_last=True`` in the ``TrainingArguments`` the ``Trainer`` that
    ``trainer`` (the user's expression for it) is built with: a ``Trainer`` builds its
    training loader from its arguments."""
    values = Values(recipe)
    options: list[Option] = []
    for origin in provenance.origins(trainer):
        node = origin.node
        if not isinstance(node, cst.Call) or not recipe.program.is_trainer_call(node):
            continue
        given = next((a.value for a in node.args if a.keyword and a.keyword.value == "args"),
                     None)
        if given is None:
            continue
        for owner in values.owners_of(given, patterns.ANY_TRAINING_ARGS):
            options.append(Option(_label(recipe, node, "dataloader_drop_last=True"),
                                  _set_keyword(recipe, owner, "dataloader_drop_last")))
    return options[:MAX_OPTIONS]


# -- move-to-device ---------------------------------------------------------------------


def device_name(recipe: PlannedEdits, at: cst.CSTNode) -> str:
    """A name that holds a device where ``at`` runs: one assigned from ``torch.device(...)``
    or from an expression naming ``"cuda"``/``"cpu"``, or called ``device``; "" when none
    is in scope."""
    program = recipe.program
    for name in sorted(program.visible_names(at), key=lambda n: "device" not in n.lower()):
        if not program.resolves(name, at):
            continue
        for _, value in program.assigned_values(name, at):
            text = code(value)
            if (isinstance(value, cst.Call) and recipe.is_qualified(value.func,
                                                                     patterns.TORCH_DEVICE)) \
                    or "cuda" in text or name.lower() == "device":
                return name
    return ""


def device_options(recipe: PlannedEdits, use: cst.BaseExpression) -> list[Option]:
    """The batch a loop takes moved to the model's device at the top of the loop's body,
    where a reviewer expects it: the names its ``for`` target unpacks
    (``ids, y = ids.to(device), y.to(device)``), or a dict batch
    (``batch = {k: v.to(device) for k, v in batch.items()}``); ``device`` a name in scope
    (:func:`device_name`). None when ``use`` is not a name a ``for`` binds, or no device
    name is in scope."""
    program = recipe.program
    base = use.value if isinstance(use, cst.Subscript) else use
    if not isinstance(base, cst.Name):
        return []
    loop = next((t for n in program.resolve(base.value, base)
                 for t in [next((a for a in program.ancestors(n) if isinstance(a, cst.For)),
                                None)]
                 if t is not None and t.target in (n, *program.ancestors(n))), None)
    if loop is None or not isinstance(loop.body, cst.IndentedBlock) or not loop.body.body:
        return []
    device = device_name(recipe, loop.body.body[0])
    if not device:
        recipe.reason = "no name holding the model's device is in scope of the loop"
        return []
    target = loop.target
    names = [e.value.value for e in target.elements if isinstance(e.value, cst.Name)] \
        if isinstance(target, (cst.Tuple, cst.List)) else \
        [target.value] if isinstance(target, cst.Name) else []
    if not names:
        return []
    if isinstance(use, cst.Subscript) and len(names) == 1:
        text = f"{names[0]} = {{k: v.to({device}) for k, v in {names[0]}.items()}}"
    else:
        moved = ", ".join(f"{n}.to({device})" for n in names)
        text = f"{', '.join(names)} = {moved}"
    if any(f"{n}.to(" in code(stmt) or f".to({device})" in code(stmt)
           for stmt in loop.body.body[:1] for n in names):
        recipe.reason = "the loop moves its batch to a device already"
        return []
    anchor = loop.body.body[0]
    assert isinstance(anchor, (cst.SimpleStatementLine, cst.BaseCompoundStatement))

    def plan() -> None:
        insert_statement(recipe, anchor, text, f"{text}: the batch on the model's device")

    return [Option(_label(recipe, anchor, text), plan)]


def _set_keyword(recipe: PlannedEdits, owner: Owner, name: str) -> Callable[[], None]:
    def plan() -> None:
        try:
            owner.set(name, True, "the last, short batch is dropped")
        except NotFollowed as exc:
            recipe.reason = str(exc)
    return plan


def _set_drop_last(recipe: PlannedEdits, owner: Owner) -> Callable[[], None]:
    def plan() -> None:
        try:  # drop_last is DataLoader's 9th parameter (torch 2.13)
            owner.set("drop_last", True, "the last, short batch is dropped", position=8)
        except NotFollowed as exc:
            recipe.reason = str(exc)
    return plan
