"""one-label-encoder: every split's labels mapped to ids by the training split's mapping.

The ``label-encoding-mismatch`` finding (``autofix/run/child/label_maps.py``) saw two
mappings of labels to ids that give one label two ids: a split encoded by its own
``pd.factorize`` (ids in order of appearance), its own ``LabelEncoder`` fit, its own
``class_encode_column`` or its own label map. scikit-learn's guide ("fit on the training
data, transform the test data") and the HF course build the mapping once from the
training labels and apply it to every split; so does this recipe, at the encoding that
came second:

- ``pd.factorize(val)[0]`` after ``y_train, intents = pd.factorize(train)``:
  ``intents.get_indexer(val)`` (``pd.Index(intents)`` for the uniques of an array);
  after a label map ``label2id`` the run saw: ``pd.Series(val).map(label2id).to_numpy()``;
- ``LabelEncoder().fit_transform(test)`` (or a refit of the same encoder) after
  ``enc.fit_transform(train)``: ``enc.transform(test)``;
- ``test.class_encode_column("label")`` after ``train = train.class_encode_column("label")``:
  ``test.cast_column("label", train.features["label"])``;
- a label map built again by the helper that built the training one
  (``Dataset(val_path, tok, build_label_map(val_path))`` after ``label2id =
  build_label_map(train_path)`` is given to the same constructor): ``label2id``.

The edit is made only when the run sent the finding; a split encoded inside a helper
called once per split is left to the advice.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import libcst as cst
import libcst.matchers as m

from autofix.toolkit import Example, NotApplicable, argument, code, patterns
from autofix.toolkit.scope import PlannedEdits, replace_with

from ._sites import sites

KIND = "label-encoding-mismatch"
#: A helper that builds a label map (by its name), when the run did not name its result.
MAP_HELPER = re.compile(r"label|map|encod|class|vocab", re.I)


def _facts(*names: str) -> dict[str, object]:
    return {"invariants": [{"kind": KIND, "file": "script.py", "line": 5, "facts": {
        "first": {"name": names[0] if names else "", "mapping": {}},
        "second": {"name": names[1] if len(names) > 1 else "", "mapping": {}}}}]}


class OneLabelEncoder(PlannedEdits):
    id = "one-label-encoder"
    category = KIND
    title = "encode every split's labels with the training split's mapping"
    requires_words = (("factorize", "LabelEncoder", "class_encode_column", "label2id",
                       "label_map", "build_label_map"),)
    nothing_to_do = "no second encoding of the labels the recipe can point at the first"

    examples = (
        Example(  # factorize per split: the training uniques index the validation labels
            before="import pandas as pd\ny_train, intents = pd.factorize(train_df.intent)\n"
                   "y_val = pd.factorize(val_df.intent)[0]\n",
            after="import pandas as pd\ny_train, intents = pd.factorize(train_df.intent)\n"
                  "y_val = intents.get_indexer(val_df.intent)\n",
            run_facts=_facts(),
        ),
        Example(  # uniques of an array are an array: indexed through pd.Index
            before="import pandas as pd\ny_train, classes = pd.factorize(n_train)\n"
                   "y_test = pd.factorize(n_test)[0]\n",
            after="import pandas as pd\ny_train, classes = pd.factorize(n_train)\n"
                  "y_test = pd.Index(classes).get_indexer(n_test)\n",
            run_facts=_facts(),
        ),
        Example(  # a label map for training, factorize for validation
            before="import pandas as pd\nlabel2id = {n: i for i, n in enumerate(names)}\n"
                   "y_train = train.intent.map(label2id)\n"
                   "y_val = pd.factorize(val.intent)[0]\n",
            after="import pandas as pd\nlabel2id = {n: i for i, n in enumerate(names)}\n"
                  "y_train = train.intent.map(label2id)\n"
                  "y_val = pd.Series(val.intent).map(label2id).to_numpy()\n",
            run_facts=_facts("label2id", "y_val"),
        ),
        Example(  # a LabelEncoder fitted again on the test labels
            before="from sklearn.preprocessing import LabelEncoder\nenc = LabelEncoder()\n"
                   "y_train = enc.fit_transform(train_labels)\n"
                   "y_test = LabelEncoder().fit_transform(test_labels)\n",
            after="from sklearn.preprocessing import LabelEncoder\nenc = LabelEncoder()\n"
                  "y_train = enc.fit_transform(train_labels)\n"
                  "y_test = enc.transform(test_labels)\n",
            run_facts=_facts(),
        ),
        Example(  # class_encode_column on each split
            before="train = train.class_encode_column(\"label\")\n"
                   "test = test.class_encode_column(\"label\")\n",
            after="train = train.class_encode_column(\"label\")\n"
                  "test = test.cast_column(\"label\", train.features[\"label\"])\n",
            run_facts=_facts(),
        ),
        Example(  # the helper that built the training map, called again for validation
            before="label2id = build_label_map(train_path)\n"
                   "train_set = TicketDataset(train_path, tok, label2id)\n"
                   "val_set = TicketDataset(val_path, tok, build_label_map(val_path))\n",
            after="label2id = build_label_map(train_path)\n"
                  "train_set = TicketDataset(train_path, tok, label2id)\n"
                  "val_set = TicketDataset(val_path, tok, label2id)\n",
            run_facts=_facts("label2id", "label2id"),
        ),
        Example(  # the run saw no mismatch: one factorize per split is left alone
            before="import pandas as pd\ny_train, intents = pd.factorize(train_df.intent)\n"
                   "y_val = pd.factorize(val_df.intent)[0]\n",
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        found = sites(self, KIND)
        if not found:
            raise NotApplicable("the run saw no two mappings of labels that disagree")
        self.names = {str(side.get("name") or "").split(".")[-1]
                      for site in found if isinstance(site.get("facts"), Mapping)
                      for side in (site["facts"].get("first") or {},
                                   site["facts"].get("second") or {})
                      if isinstance(side, Mapping)} - {""}
        self._factorize()
        self._label_encoder()
        self._class_encode()
        self._helper_twice()
        if not self.edits:
            raise NotApplicable(self.nothing_to_do)

    def _ordered(self, pattern: str) -> list[cst.Call]:
        return sorted((c for c in self.program.calls if self.is_qualified(c.func, pattern)),
                      key=self.program.line)

    # -- pd.factorize ------------------------------------------------------------------

    def _factorize(self) -> None:
        calls = self._ordered(patterns.FACTORIZE)
        uniques: list[tuple[cst.Call, str]] = []  # (call, name of its uniques)
        for call in calls:
            parent = self.program.parent(call)
            target = parent.targets[0].target if isinstance(parent, cst.Assign) \
                and len(parent.targets) == 1 else None
            if isinstance(target, cst.Tuple) and len(target.elements) == 2 \
                    and isinstance(target.elements[1].value, cst.Name):
                uniques.append((call, target.elements[1].value.value))
                continue
            subscript = self._first_item(call)
            given = argument(call, "values", 0)
            if subscript is None or given is None:
                continue
            earlier = [(c, u) for c, u in uniques
                       if self.program.line(c) < self.program.line(call)
                       and self.program.resolves(u, call)]
            if earlier:
                first, name = earlier[0]
                index = name if self._series(argument(first, "values", 0)) else \
                    f"{code(call.func.value)}.Index({name})" \
                    if isinstance(call.func, cst.Attribute) else name
                new = cst.parse_expression(f"{index}.get_indexer({code(given)})")
                self.plan_edit(subscript, replace_with(new),
                               f"{code(subscript)} -> {code(new)}: the training split's ids")
                continue
            label_map = self._label_map_at(call)
            if label_map and isinstance(call.func, cst.Attribute):
                pandas = code(call.func.value)
                new = cst.parse_expression(
                    f"{pandas}.Series({code(given)}).map({label_map}).to_numpy()")
                self.plan_edit(subscript, replace_with(new),
                               f"{code(subscript)} -> {code(new)}: the training label map")

    @staticmethod
    def _series(expr: cst.BaseExpression | None) -> bool:
        """``expr`` reads a DataFrame column (``df["intent"]``, ``df.intent``): factorize
        then returns its uniques as a pandas ``Index`` (of an array: a numpy array, which
        has no ``get_indexer``; it is wrapped in ``pd.Index``)."""
        return isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(
            expr.slice[0].slice, cst.Index) and isinstance(
                expr.slice[0].slice.value, cst.SimpleString) or isinstance(expr, cst.Attribute)

    def _first_item(self, call: cst.Call) -> cst.Subscript | None:
        """``call[0]`` around ``call``."""
        subscript = self.program.parent(call)
        if isinstance(subscript, cst.Subscript) and subscript.value is call \
                and len(subscript.slice) == 1 and m.matches(
                    subscript.slice[0].slice, m.Index(value=m.Integer("0"))):
            return subscript
        return None

    def _label_map_at(self, node: cst.CSTNode) -> str:
        """A label map the run named that resolves at ``node`` and is assigned a dict
        (a dict comprehension, ``dict(...)``) before it."""
        for name in sorted(self.names):
            bindings = self.program.resolve(name, node)
            for binding in bindings:
                parent = self.program.parent(binding)
                grand = self.program.parent(parent) if parent is not None else None
                assign = grand if isinstance(grand, cst.Assign) else None
                if assign is not None and isinstance(assign.value, (cst.DictComp, cst.Dict)) \
                        and self.program.line(assign) < self.program.line(node):
                    return name
        return ""

    # -- LabelEncoder ------------------------------------------------------------------

    def _label_encoder(self) -> None:
        fits = sorted((c for c in self.program.calls if isinstance(c.func, cst.Attribute)
                       and c.func.attr.value in ("fit", "fit_transform")
                       and self._is_encoder(c.func.value)), key=self.program.line)
        if len(fits) < 2:
            return
        first = fits[0].func
        assert isinstance(first, cst.Attribute)
        if not isinstance(first.value, cst.Name):
            return
        encoder = first.value.value
        for call in fits[1:]:
            func = call.func
            assert isinstance(func, cst.Attribute)
            if func.attr.value != "fit_transform" or not self.program.resolves(encoder, call):
                continue
            new = call.with_changes(func=cst.Attribute(cst.Name(encoder), cst.Name("transform")))
            self.plan_edit(call, replace_with(new), f"{code(call)} -> {code(new)}: the "
                                                    "encoder fitted on the training labels")

    def _is_encoder(self, expr: cst.BaseExpression) -> bool:
        return any(isinstance(v, cst.Call) and self.is_qualified(v.func, patterns.LABEL_ENCODER)
                   for v in self.program.values(expr))

    # -- class_encode_column ------------------------------------------------------------

    def _class_encode(self) -> None:
        calls = sorted((c for c in self.program.calls if isinstance(c.func, cst.Attribute)
                        and c.func.attr.value == "class_encode_column" and c.args),
                       key=self.program.line)
        if len(calls) < 2:
            return
        parent = self.program.parent(calls[0])
        target = parent.targets[0].target if isinstance(parent, cst.Assign) else None
        if not isinstance(target, cst.Name):
            return
        column = code(calls[0].args[0].value)
        for call in calls[1:]:
            func = call.func
            assert isinstance(func, cst.Attribute)
            if code(call.args[0].value) != column or not self.program.resolves(target.value,
                                                                               call):
                continue
            new = cst.parse_expression(f"{code(func.value)}.cast_column({column}, "
                                       f"{target.value}.features[{column}])")
            self.plan_edit(call, replace_with(new), f"{code(call)} -> {code(new)}: the "
                                                    "training split's ClassLabel")

    # -- a label-map helper called again -------------------------------------------------

    def _helper_twice(self) -> None:
        bound: dict[str, tuple[str, cst.Call]] = {}  # helper -> (name, call)
        for call in sorted(self.program.calls, key=self.program.line):
            if not isinstance(call.func, cst.Name):
                continue
            helper = call.func.value
            parent = self.program.parent(call)
            if isinstance(parent, cst.Assign) and len(parent.targets) == 1 \
                    and isinstance(parent.targets[0].target, cst.Name):
                name = parent.targets[0].target.value
                if name in self.names or MAP_HELPER.search(helper):
                    bound.setdefault(helper, (name, call))
                continue
            if helper not in bound or not isinstance(parent, cst.Arg):
                continue
            name, first = bound[helper]
            if code(first) == code(call) or not self.program.resolves(name, call):
                continue
            self.plan_edit(call, replace_with(cst.Name(name)),
                           f"{code(call)} -> {name}: the label map built from the training "
                           "split")
