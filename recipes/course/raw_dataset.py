"""raw-dataset: ``Trainer`` (or a ``DataLoader``) is given the raw split instead of the
tokenized one.

Course (chapter 8, "Debugging the training pipeline"): the script maps a tokenize
function over ``raw_datasets`` but passes ``raw_datasets["train"]`` to ``Trainer``; the
text columns are dropped as unused and the model gets no ``input_ids``. In a hand-written
loop the same slip builds ``DataLoader(raw_datasets["train"], collate_fn=collator)``, and
the padding collator finds no ``input_ids`` in the text rows.
Fix: the raw dataset variable in ``train_dataset=``/``eval_dataset=`` (or the dataset of
a ``DataLoader`` batched by the default collate or a library collator: a function of the
script's own may tokenize the text itself) becomes the variable that holds its
``.map(...)`` result, same split.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, argument, code, keyword
from autofix.toolkit.patterns import DATALOADER
from autofix.toolkit.scope import (
    PlannedEdits,
    branches,
    chain_base,
    map_receiver,
    replace_with,
)
from autofix.toolkit.values import Values

#: Trainer's positional parameters: model, args, data_collator, train_dataset, eval_dataset.
_POSITIONS = {3: "train_dataset", 4: "eval_dataset"}
_DATASET_ARGS = ("train_dataset", "eval_dataset")
#: ``DataLoader``'s positional parameters before ``collate_fn`` (dataset, batch_size,
#: shuffle, sampler, batch_sampler, num_workers): one more positional is the collate.
_LOADER_COLLATE = 6


class RawDatasetToTokenized(PlannedEdits):
    id = "raw-dataset"
    category = "raw-dataset"
    title = "pass the tokenized datasets to Trainer or the DataLoader"
    nothing_to_do = "no Trainer or DataLoader dataset argument has a tokenized counterpart"

    examples = (
        Example(
            before=(
                "from transformers import Trainer\n"
                "tokenized = raw.map(tok, batched=True)\n"
                "trainer = Trainer(model, args, train_dataset=raw['train'],"
                " eval_dataset=raw['test'])  # keep\n"
            ),
            after=(
                "from transformers import Trainer\n"
                "tokenized = raw.map(tok, batched=True)\n"
                "trainer = Trainer(\n"
                "    model,\n"
                "    args,\n"
                "    train_dataset=tokenized['train'],\n"
                "    eval_dataset=tokenized['test'],\n"
                ")  # keep\n"
            ),
        ),
        Example(  # alias, plain variables, positional datasets
            before=(
                "import transformers as tr\n"
                "train_tok = train_raw.map(fn)\n"
                "t = tr.Trainer(m, a, None, train_raw)\n"
            ),
            after=(
                "import transformers as tr\n"
                "train_tok = train_raw.map(fn)\n"
                "t = tr.Trainer(m, a, None, train_tok)\n"
            ),
        ),
        Example(  # already tokenized
            before=(
                "from transformers import Trainer\n"
                "tokenized = raw.map(tok, batched=True)\n"
                "Trainer(model, args, train_dataset=tokenized['train'])\n"
            ),
        ),
        Example(  # not transformers' Trainer
            before=(
                "from mylib import Trainer\n"
                "tokenized = raw.map(tok, batched=True)\n"
                "Trainer(model, args, train_dataset=raw['train'])\n"
            ),
        ),
        Example(  # followed through functions: a parameter filled at the call site, a
            # helper returning the mapped splits; the edit is made where both are in scope
            before=(
                "from transformers import Trainer\n"
                "def encode(splits, tok):\n"
                "    return splits.map(tok, batched=True)\n"
                "def build(model, train_ds):\n"
                "    return Trainer(model=model, train_dataset=train_ds)\n"
                "def main():\n"
                "    splits = load()\n"
                "    encoded = encode(splits, tok)\n"
                "    trainer = build(model, splits['train'])\n"
            ),
            after=(
                "from transformers import Trainer\n"
                "def encode(splits, tok):\n"
                "    return splits.map(tok, batched=True)\n"
                "def build(model, train_ds):\n"
                "    return Trainer(model=model, train_dataset=train_ds)\n"
                "def main():\n"
                "    splits = load()\n"
                "    encoded = encode(splits, tok)\n"
                "    trainer = build(model, encoded['train'])\n"
            ),
        ),
        Example(  # a helper returning a tuple of mapped splits, a Trainer subclass
            before=(
                "from transformers import Trainer\n"
                "class MyTrainer(Trainer):\n"
                "    pass\n"
                "def tokenize(a, b):\n"
                "    return a.map(f).remove_columns(['text']), b.map(f)\n"
                "train_raw, eval_raw = load()\n"
                "train_enc, eval_enc = tokenize(train_raw, eval_raw)\n"
                "MyTrainer(model, args, train_dataset=train_raw, eval_dataset=eval_raw)\n"
            ),
            after=(
                "from transformers import Trainer\n"
                "class MyTrainer(Trainer):\n"
                "    pass\n"
                "def tokenize(a, b):\n"
                "    return a.map(f).remove_columns(['text']), b.map(f)\n"
                "train_raw, eval_raw = load()\n"
                "train_enc, eval_enc = tokenize(train_raw, eval_raw)\n"
                "MyTrainer(model, args, train_dataset=train_enc, eval_dataset=eval_enc)\n"
            ),
        ),
        Example(  # a conditional dataset, followed back to the assignment of the raw split
            before=(
                "from transformers import Trainer\n"
                "def main(args):\n"
                "    raw = load()\n"
                "    encoded = raw.map(tok, batched=True)\n"
                "    if args.do_train:\n"
                "        train_ds = raw['train']\n"
                "        if args.limit:\n"
                "            train_ds = train_ds.select(range(args.limit))\n"
                "    return Trainer(model, train_dataset=train_ds if args.do_train else None)\n"
            ),
            after=(
                "from transformers import Trainer\n"
                "def main(args):\n"
                "    raw = load()\n"
                "    encoded = raw.map(tok, batched=True)\n"
                "    if args.do_train:\n"
                "        train_ds = encoded['train']\n"
                "        if args.limit:\n"
                "            train_ds = train_ds.select(range(args.limit))\n"
                "    return Trainer(model, train_dataset=train_ds if args.do_train else None)\n"
            ),
        ),
        Example(  # a chain of maps (tokenize, then group into blocks): its end, through
            # the variable that already holds that end's split under the same test
            before=(
                "from transformers import Trainer\n"
                "def main(args):\n"
                "    raw = load()\n"
                "    tokens = raw.map(tokenize, batched=True)\n"
                "    blocks = tokens.map(group, batched=True)\n"
                "    if args.do_train:\n"
                "        train_ds = blocks['train']\n"
                "    return Trainer(model, train_dataset=raw['train'] if args.do_train else None,\n"
                "                   eval_dataset=raw['validation'])\n"
            ),
            after=(
                "from transformers import Trainer\n"
                "def main(args):\n"
                "    raw = load()\n"
                "    tokens = raw.map(tokenize, batched=True)\n"
                "    blocks = tokens.map(group, batched=True)\n"
                "    if args.do_train:\n"
                "        train_ds = blocks['train']\n"
                "    return Trainer(model, train_dataset=train_ds if args.do_train else None,\n"
                "                   eval_dataset=blocks['validation'])\n"
            ),
        ),
        Example(  # a hand loop: the DataLoader's dataset, batched by a library collator
            before=(
                "from torch.utils.data import DataLoader\n"
                "from transformers import DataCollatorWithPadding\n"
                "enc = ds.map(tok, batched=True).remove_columns(['text'])\n"
                "pad = DataCollatorWithPadding(tokenizer)\n"
                "train = DataLoader(ds['train'], batch_size=16, collate_fn=pad)\n"
                "test = DataLoader(enc['test'], collate_fn=DataCollatorWithPadding(tokenizer))\n"
            ),
            after=(
                "from torch.utils.data import DataLoader\n"
                "from transformers import DataCollatorWithPadding\n"
                "enc = ds.map(tok, batched=True).remove_columns(['text'])\n"
                "pad = DataCollatorWithPadding(tokenizer)\n"
                "train = DataLoader(enc['train'], batch_size=16, collate_fn=pad)\n"
                "test = DataLoader(enc['test'], collate_fn=DataCollatorWithPadding(tokenizer))\n"
            ),
        ),
        Example(  # a collate function of the script's own may tokenize the text: kept
            before=(
                "from torch.utils.data import DataLoader\n"
                "enc = ds.map(tok, batched=True)\n"
                "def collate(rows):\n"
                "    return tokenizer([r['text'] for r in rows], padding=True)\n"
                "train = DataLoader(ds['train'], collate_fn=collate)\n"
            ),
        ),
        Example(  # a collate this reading cannot see (positional, **kwargs) or whose
            # name is also a def of the script's: kept
            before=(
                "from torch.utils.data import DataLoader\n"
                "from transformers import DataCollatorWithPadding\n"
                "enc = ds.map(tok, batched=True)\n"
                "collate = DataCollatorWithPadding(tok)\n"
                "def collate(rows):\n"
                "    return tok([r['text'] for r in rows], padding=True)\n"
                "a = DataLoader(ds['train'], collate_fn=collate)\n"
                "b = DataLoader(ds['train'], 8, True, None, None, 0, collate)\n"
                "c = DataLoader(ds['train'], **loader_kwargs)\n"
            ),
        ),
        Example(  # the tokenized split is not in scope where Trainer is built: declined
            before=(
                "from transformers import Trainer\n"
                "def build(model, train_ds):\n"
                "    return Trainer(model=model, train_dataset=train_ds)\n"
                "def prep():\n"
                "    tokenized = raw.map(tok)\n"
            ),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        self.values = Values(self)
        for call in self.program.calls:
            if self.is_qualified(call.func, DATALOADER):
                dataset = self._loader_dataset(call)
                if dataset is not None:
                    for value, guards in branches(dataset):
                        self._fix("dataset", value, call, 0, guards)
                continue
            if not self.program.is_trainer_call(call):
                continue
            for i, arg in enumerate(call.args):
                name = arg.keyword.value if arg.keyword is not None else _POSITIONS.get(i)
                if name in _DATASET_ARGS and not arg.star:
                    for value, guards in branches(arg.value):
                        self._fix(name, value, call, 0, guards)

    def _loader_dataset(self, call: cst.Call) -> cst.BaseExpression | None:
        """The dataset of ``DataLoader(...)`` (first positional or ``dataset=``) when the
        loader surely batches with the default collate or a library collator (a
        ``transformers``/``torch`` callable, every binding of its name one); ``None`` with
        a ``collate_fn`` of the script's own, which may tokenize the raw rows itself, or
        one this reading cannot see (given positionally, or through ``**kwargs``)."""
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if len(positional) > _LOADER_COLLATE or any(a.star == "**" for a in call.args):
            return None
        collate = keyword(call, "collate_fn")
        if collate is not None and not m.matches(collate.value, m.Name("None")) \
                and not self._library_callable(collate.value, call):
            return None
        return argument(call, "dataset", 0)

    def _library_callable(self, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """``expr`` is a ``transformers``/``torch`` callable or an instance of one
        (``DataCollatorWithPadding(tok)``), directly or through every binding of its
        name (a ``def`` or a parameter of the same name: not surely)."""
        def library(node: cst.CSTNode) -> bool:
            func = node.func if isinstance(node, cst.Call) else node
            return any(name.startswith(("transformers.", "torch."))
                       for name in self.qualified(func))

        if library(expr):
            return True
        if not isinstance(expr, cst.Name):
            return False
        targets = self.program.resolve(expr.value, at)
        if not targets or any(isinstance(t, (cst.FunctionDef, cst.ClassDef, cst.Param,
                                             cst.ImportAlias)) for t in targets):
            return False
        values = self.values.origins(expr)
        return bool(values) and all(library(v) for v in values)

    def _fix(self, name: str, expr: cst.BaseExpression, at: cst.CSTNode, depth: int,
             guards: tuple[str, ...] = ()) -> None:
        """Plan the swap of ``expr`` (a raw dataset reaching ``at``, under the tests
        ``guards``) for its tokenized counterpart. A local variable with no counterpart is
        followed back through its assignments (``ds = raw["train"]``, then
        ``ds = ds.select(...)``) to the one that binds the raw split, which is swapped;
        a parameter is followed to the call sites that fill it."""
        program = self.program
        base = expr.value if isinstance(expr, cst.Subscript) else expr
        if self._tokenized(base):
            self.reason = f"{code(expr)} is already tokenized (a .map(...) result)"
            return
        new = self._counterpart(expr, base, at, guards)
        if isinstance(new, str):  # a counterpart, not bound where it is needed
            self.reason = new
            return
        if new is not None:
            where = f"{name}={code(expr)}" if at is not expr else f"{code(expr)}"
            self.plan_edit(expr, replace_with(new),
                           f"{where} -> {code(new)} (line {program.line(expr)})")
            return
        func = program.function_of(at)
        targets = program.resolve(base.value, at) if isinstance(base, cst.Name) else []
        param = next((t for t in targets if isinstance(t, cst.Param)), None)
        if func is not None and param is not None and depth < 3:
            sites = program.call_sites(func)
            for site in sites:
                given = program.bound(func, site, param.name.value)
                if given is not None:
                    full = expr.with_changes(value=given) if isinstance(expr, cst.Subscript) \
                        and not isinstance(given, cst.Subscript) else given
                    if full is given:
                        self._fix(name, given, site, depth + 1)
                    else:
                        self.reason = (f"{code(expr)} indexes parameter {param.name.value} of "
                                       f"{func.name.value}(); autofix swaps whole datasets there")
            if not sites:
                self.reason = (f"{name} comes from parameter {param.name.value} of "
                               f"{func.name.value}(), which the module never calls")
            return
        if isinstance(expr, cst.Name) and param is None and depth < 3:
            roots = [value for _, value in program.assigned_values(expr.value, at)
                     if not self._carries(value, expr.value)]
            if roots:  # ds = raw["train"] (and ds = ds.select(...)): swap where it is bound
                for value in roots:
                    self._fix(name, value, value, depth + 1)
                return
        where = f"{func.name.value}()" if func is not None else "the module"
        self.reason = (f"no variable in scope in {where} holds {code(base)}.map(...) "
                       f"(the tokenized counterpart of {code(expr)})")

    def _tokenized(self, base: cst.BaseExpression) -> bool:
        """Some value of ``base`` is a ``.map(...)`` result (or a transform of one)."""
        return any(map_receiver(v) is not None for v in self.values.origins(base))

    def _bound_name(self, name: str, at: cst.CSTNode) -> cst.Name | None:
        """A ``Name`` node of the tree that reads the variable ``name`` bound at ``at`` (one
        of its assignment targets), to compare values with."""
        for target, _ in self.program.assigned_values(name, at):
            if isinstance(target, cst.Name):
                return target
        return None

    @staticmethod
    def _carries(value: cst.BaseExpression, name: str) -> bool:
        """``value`` is a transform of ``name`` itself (``ds.select(...)``, ``ds.shuffle()``)."""
        origin = chain_base(value)
        return isinstance(origin, cst.Name) and origin.value == name

    def _counterpart(self, expr: cst.BaseExpression, base: cst.BaseExpression,
                     at: cst.CSTNode, guards: tuple[str, ...] = ()
                     ) -> cst.BaseExpression | str | None:
        """The tokenized counterpart of ``expr`` at ``at``: the end of the chain of maps
        that starts from it (``tok = raw.map(tokenize)``, then ``lm = tok.map(group)``:
        ``raw["train"]`` -> ``lm["train"]``), or a variable already holding that end's split
        (``train_dataset = lm["train"]``, bound wherever ``at`` runs under ``guards``);
        ``None`` when ``expr`` is not mapped in scope; the reason when the counterpart is
        not surely bound at ``at``."""
        new = self._mapped(expr, base, at)
        seen: set[str] = set()
        while new is not None:
            key = code(new)
            if key in seen:
                break
            seen.add(key)
            step = self._mapped(new, new.value if isinstance(new, cst.Subscript) else new, at)
            if step is None:
                break
            new = step
        if isinstance(new, cst.Subscript):
            held = self._holder(new, at, guards)
            if held is not None:
                return held
        head = new.value if isinstance(new, cst.Subscript) else new
        if isinstance(head, cst.Name) and not self.program.bound_at(head.value, at, guards):
            return (f"{head.value} holds the tokenized counterpart of {code(expr)} but is not "
                    f"bound wherever line {self.program.line(at)} runs")
        return new

    def _holder(self, split: cst.Subscript, at: cst.CSTNode, guards: tuple[str, ...]
                ) -> cst.Name | None:
        """A variable bound at ``at`` whose value is ``split`` (``ds = lm["train"]``, maybe
        then ``ds = ds.select(...)``), so the script's own selection is kept."""
        program = self.program
        for name in program.visible_names(at):
            values = program.assigned_values(name, at)
            roots = [v for _, v in values if not self._carries(v, name)]
            if len(roots) == 1 and isinstance(roots[0], cst.Subscript) \
                    and code(roots[0]) == code(split) and program.bound_at(name, at, guards):
                return cst.Name(name)
        return None

    def _mapped(self, expr: cst.BaseExpression, base: cst.BaseExpression,
                at: cst.CSTNode) -> cst.BaseExpression | None:
        """A name in scope at ``at`` holding ``expr`` (or its base) mapped; ``None``: none.
        ``base`` may be a name made by an earlier step (not in the tree): it is then the
        variable of that name bound at ``at``."""
        program = self.program
        if isinstance(base, cst.Name) and program.parent(base) is None:
            base = self._bound_name(base.value, at) or base
        for name in program.visible_names(at):
            if isinstance(base, cst.Name) and name == base.value or not program.resolves(name, at):
                continue
            for target in program.resolve(name, at):
                if isinstance(target, (cst.FunctionDef, cst.ClassDef, cst.ImportAlias)):
                    continue
                for value in program.target_values(target, 1):
                    receiver = map_receiver(value)
                    if receiver is None:
                        continue
                    if isinstance(expr, cst.Subscript) and isinstance(receiver, cst.Subscript) \
                            and code(receiver.slice[0]) == code(expr.slice[0]) \
                            and program.same_value(receiver.value, base):
                        return cst.Name(name)
                    if program.same_value(receiver, base):
                        return expr.with_changes(value=cst.Name(name)) \
                            if isinstance(expr, cst.Subscript) else cst.Name(name)
                    if isinstance(expr, cst.Subscript) and any(  # ds = raw["train"] ...
                            isinstance(v, cst.Subscript)  # ... ds = ds.map(tokenize)
                            and code(v.slice[0]) == code(expr.slice[0])
                            and program.same_value(v.value, base)
                            for v in self.values.origins(receiver)):
                        return cst.Name(name)
        return None

    def summary(self) -> str:
        return f"{self.title} ({', '.join(self.edits)})"
