"""override-signature: a method overriding a library hook, called by the installed library
with arguments it does not take.

transformers 4.46 made ``Trainer.training_step`` call ``self.compute_loss(model, inputs,
num_items_in_batch=...)``; an override written as ``compute_loss(self, model, inputs,
return_outputs=False)`` raises ``TypeError: WeightedTrainer.compute_loss() got an
unexpected keyword argument 'num_items_in_batch'`` (huggingface/transformers#36331). The
API check reads how the installed library calls the method and what the base method
declares (``autofix/run/child/overrides.py``), and its facts say what the override lacks
(``add``: the base's parameters with the base's defaults, ``kwargs``: keywords the base
itself takes only through ``**kwargs``). The fix gives the override exactly that:

- a method that forwards to ``super().<method>(...)`` gets ``**kwargs``, passed on in that
  call, so the library's new keyword reaches the base as the library meant it;
- otherwise the named parameters with the library's defaults (``num_items_in_batch=None``),
  and ``**kwargs`` where the base takes the keyword only through ``**kwargs`` (a
  ``TrainerCallback`` hook, which ``CallbackHandler`` calls with ``model=``, ``optimizer=``
  ... for every event).

Without the check's facts (a traceback of a run), an unexpected keyword gets ``**kwargs``:
the one change that accepts it without inventing a default. The edit is made in the file
that defines the class (a module of the user's too).
"""

from __future__ import annotations

import re

import libcst as cst

from autofix.toolkit import Example, NotApplicable, Recipe

_UNEXPECTED = re.compile(r"(\w+)\.(\w+)\(\) got an unexpected keyword argument '(\w+)'")
_CALLED = re.compile(r"(\w+)\.(\w+)\(\)")
_PARAM = re.compile(r"(\w+)=(.+)")


def _new_param(text: str) -> cst.Param:
    match = _PARAM.fullmatch(text.strip())
    if match is None:
        raise NotApplicable(f"cannot read the parameter {text!r}")
    return cst.Param(cst.Name(match.group(1)), default=cst.parse_expression(match.group(2)),
                     star="",
                     equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                           whitespace_after=cst.SimpleWhitespace("")))


def _names(params: cst.Parameters) -> set[str]:
    found = {p.name.value for p in (*params.posonly_params, *params.params,
                                    *params.kwonly_params)}
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            found.add(star.name.value)
    return found


def _forwarding_calls(func: cst.FunctionDef, method: str) -> list[cst.Call]:
    """The ``super().<method>(...)`` calls in ``func``'s body."""
    found: list[cst.Call] = []

    class Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            f = node.func
            if isinstance(f, cst.Attribute) and f.attr.value == method \
                    and isinstance(f.value, cst.Call) and isinstance(f.value.func, cst.Name) \
                    and f.value.func.value == "super":
                found.append(node)

    func.body.visit(Finder())
    return found


class OverrideSignature(Recipe):
    id = "override-signature"
    category = "override-signature"
    title = "give the overriding method the arguments the installed library passes"
    requires_words = (("def",),)

    examples = (
        Example(  # t3_01 / d01: the pre-4.46 compute_loss
            before=("from transformers import Trainer\n"
                    "class WeightedTrainer(Trainer):\n"
                    "    def compute_loss(self, model, inputs, return_outputs=False):\n"
                    "        outputs = model(**inputs)\n"
                    "        return (outputs.loss, outputs) if return_outputs else outputs.loss\n"),
            after=("from transformers import Trainer\n"
                   "class WeightedTrainer(Trainer):\n"
                   "    def compute_loss(self, model, inputs, return_outputs=False, "
                   "num_items_in_batch=None):\n"
                   "        outputs = model(**inputs)\n"
                   "        return (outputs.loss, outputs) if return_outputs else outputs.loss\n"),
            evidence="TypeError: WeightedTrainer.compute_loss() got an unexpected keyword "
                     "argument 'num_items_in_batch'",
            facts=(("class", "WeightedTrainer"), ("method", "compute_loss"),
                   ("kind", "keyword"), ("add", "num_items_in_batch=None"), ("kwargs", "")),
        ),
        Example(  # forwards to the base: **kwargs, passed on
            before=("from transformers import Trainer\n"
                    "class LoggingTrainer(Trainer):\n"
                    "    def compute_loss(self, model, inputs, return_outputs=False):\n"
                    "        self.calls += 1\n"
                    "        return super().compute_loss(model, inputs, return_outputs)\n"),
            after=("from transformers import Trainer\n"
                   "class LoggingTrainer(Trainer):\n"
                   "    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):\n"
                   "        self.calls += 1\n"
                   "        return super().compute_loss(model, inputs, return_outputs, "
                   "**kwargs)\n"),
            evidence="TypeError: LoggingTrainer.compute_loss() got an unexpected keyword "
                     "argument 'num_items_in_batch'",
            facts=(("class", "LoggingTrainer"), ("method", "compute_loss"),
                   ("kind", "keyword"), ("add", "num_items_in_batch=None"), ("kwargs", "")),
        ),
        Example(  # a callback hook: the handler passes model=, optimizer=... to every event
            before=("from transformers import TrainerCallback\n"
                    "class Printer(TrainerCallback):\n"
                    "    def on_log(self, args, state, control, logs=None):\n"
                    "        print(logs)\n"),
            after=("from transformers import TrainerCallback\n"
                   "class Printer(TrainerCallback):\n"
                   "    def on_log(self, args, state, control, logs=None, **kwargs):\n"
                   "        print(logs)\n"),
            evidence="TypeError: Printer.on_log() got an unexpected keyword argument 'model'",
            facts=(("class", "Printer"), ("method", "on_log"), ("kind", "keyword"),
                   ("add", ""), ("kwargs", "1")),
        ),
        Example(  # a positional argument the library added (Trainer.log's start_time)
            before=("from transformers import Trainer\n"
                    "class T(Trainer):\n"
                    "    def log(self, logs):\n"
                    "        super().log(logs)\n"),
            after=("from transformers import Trainer\n"
                   "class T(Trainer):\n"
                   "    def log(self, logs, start_time=None):\n"
                   "        super().log(logs)\n"),
            evidence="TypeError: T.log() takes 2 positional arguments but 3 were given",
            facts=(("class", "T"), ("method", "log"), ("kind", "positional"),
                   ("add", "start_time=None"), ("kwargs", "")),
        ),
        Example(  # a traceback without the check's facts: **kwargs takes the keyword
            before=("from transformers import Trainer\n"
                    "class W(Trainer):\n"
                    "    def compute_loss(self, model, inputs, return_outputs=False):\n"
                    "        return model(**inputs).loss\n"),
            after=("from transformers import Trainer\n"
                   "class W(Trainer):\n"
                   "    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):\n"
                   "        return model(**inputs).loss\n"),
            evidence="TypeError: W.compute_loss() got an unexpected keyword argument "
                     "'num_items_in_batch'",
        ),
        Example(  # already takes it
            before=("from transformers import Trainer\n"
                    "class W(Trainer):\n"
                    "    def compute_loss(self, model, inputs, return_outputs=False, "
                    "num_items_in_batch=None):\n"
                    "        return model(**inputs).loss\n"),
            evidence="TypeError: W.compute_loss() got an unexpected keyword argument "
                     "'num_items_in_batch'",
            facts=(("class", "W"), ("method", "compute_loss"), ("kind", "keyword"),
                   ("add", "num_items_in_batch=None"), ("kwargs", "")),
        ),
        Example(  # the class is not in this file
            before="from transformers import Trainer\ntrainer = Trainer(model)\n",
            evidence="TypeError: W.compute_loss() got an unexpected keyword argument "
                     "'num_items_in_batch'",
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        diag = self.rc.diagnosis
        cls, method = diag.fact("class"), diag.fact("method")
        self.add = [p for p in diag.fact("add").split(", ") if p]
        self.kwargs = diag.fact("kwargs") == "1"
        self.kind = diag.fact("kind")
        if not cls:  # a traceback: the message names the class, the method, the keyword
            match = _UNEXPECTED.search(diag.evidence)
            if match is None:
                named = _CALLED.search(diag.evidence)
                raise NotApplicable("the error does not name the keyword the override lacks"
                                    if named else "the error names no overriding method")
            cls, method = match.group(1), match.group(2)
            self.add, self.kwargs, self.kind = [], True, "keyword"
        if not self.add and not self.kwargs:
            raise NotApplicable(f"{cls}.{method} requires an argument the library does not "
                                "pass: its code must change, not its signature")
        self.cls, self.method = cls, method
        self.depth: list[str] = []
        self.reason = f"no class {cls} with a method {method} in this file"
        return super().transform_module_impl(tree)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.depth.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef
                       ) -> cst.ClassDef:
        self.depth.pop()
        return updated_node

    def leave_FunctionDef(self, original_node: cst.FunctionDef,
                          updated_node: cst.FunctionDef) -> cst.FunctionDef:
        if not self.depth or self.depth[-1] != self.cls \
                or original_node.name.value != self.method:
            return updated_node
        params = updated_node.params
        have = _names(params)
        forwards = _forwarding_calls(updated_node, self.method)
        if forwards and self.kind == "keyword":  # pass the library's keywords on to the base
            if params.star_kwarg is not None:
                self.reason = f"{self.cls}.{self.method} already takes **kwargs"
                return updated_node
            self.changed(original_node, f"{self.method}(..., **kwargs), passed on to "
                                        f"super().{self.method}(...)")
            updated = updated_node.with_changes(params=params.with_changes(
                star_kwarg=cst.Param(cst.Name("kwargs"), star="**")))
            return updated.with_changes(body=updated.body.visit(_PassKwargs(self.method)))
        new = [_new_param(p) for p in self.add]
        new = [p for p in new if p.name.value not in have]
        add_kwargs = self.kwargs and params.star_kwarg is None
        if not new and not add_kwargs:
            self.reason = f"{self.cls}.{self.method} already takes what the library passes"
            return updated_node
        starred = isinstance(params.star_arg, (cst.Param, cst.ParamStar))
        if self.kind == "positional" or not (starred or params.kwonly_params):
            params = params.with_changes(params=(*params.params, *new))
        else:
            params = params.with_changes(kwonly_params=(*params.kwonly_params, *new))
        if add_kwargs:
            params = params.with_changes(star_kwarg=cst.Param(cst.Name("kwargs"), star="**"))
        added = [cst.Module([]).code_for_node(p).rstrip(", ") for p in new] \
            + (["**kwargs"] if add_kwargs else [])
        self.changed(original_node, f"{self.cls}.{self.method} takes {', '.join(added)} (the "
                                    "installed library passes it)")
        return updated_node.with_changes(params=params)


class _PassKwargs(cst.CSTTransformer):
    """``super().<method>(...)`` gets ``**kwargs`` (unless it passes a ``**`` already)."""

    def __init__(self, method: str) -> None:
        super().__init__()
        self.method = method

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        f = updated_node.func
        if not (isinstance(f, cst.Attribute) and f.attr.value == self.method
                and isinstance(f.value, cst.Call) and isinstance(f.value.func, cst.Name)
                and f.value.func.value == "super"):
            return updated_node
        if any(a.star == "**" for a in updated_node.args):
            return updated_node
        args = list(updated_node.args)
        if args:
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated_node.with_changes(args=(*args, cst.Arg(cst.Name("kwargs"), star="**")))
