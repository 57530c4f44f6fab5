"""float-labels-on-classifier: float targets (scores) on a single-label classification
head.

``*ForSequenceClassification`` picks its loss from ``config.problem_type``; a checkpoint
saved for classification (or ``num_labels`` > 1 with integer-looking config) makes it
``single_label_classification``, and cross-entropy on float targets raises
``RuntimeError: expected target dtype to be Long or Byte, but got Float`` (torch 2.13,
transformers 5.24 and 4.57.6, measured). Scores are a regression target: the model
documentation's regression setup is ``num_labels=1`` (MSE loss) with
``problem_type="regression"``.

The fix is made on the config, where the head is decided, and works on both lines:
transformers 5.24 validates ``problem_type`` against ``num_labels`` while it builds the
config, before ``from_pretrained``'s ``problem_type=`` keyword applies, so
``from_pretrained(ckpt, num_labels=1, problem_type="regression")`` raises ``ValueError:
problem_type="single_label_classification" requires num_labels > 1`` on a checkpoint
saved by a classifier (measured); setting the attributes on a loaded config does not
(``config.problem_type = "regression"`` then ``config.num_labels = 1``, measured on 5.24
and 4.57.6). So:

- a model loaded without ``config=``: ``config = AutoConfig.from_pretrained(<same
  checkpoint>, problem_type="regression")`` and ``config.num_labels = 1`` go before it,
  the model gets ``config=config`` (its other config keywords move to the config call) and
  ``ignore_mismatched_sizes=True`` (a checkpoint whose head had another size loads with a
  fresh 1-output head);
- a model built from a config object (``config=cfg``, ``from_config(cfg)``,
  ``XForSequenceClassification(cfg)``): the two attributes are set right after ``cfg`` is
  made (its ``num_labels=`` keyword dropped) when that is in the same block, else just
  before the model.

The model edited is the one that failed: the last sequence-classification model made
above the failing line.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import ParentNodeProvider, PositionProvider, ScopeProvider

from autofix.toolkit import (
    Example,
    Recipe,
    append_keyword,
    code,
    find,
    keyword,
    patterns,
    remove_keyword,
)
from autofix.toolkit.edits import set_keyword
from autofix.types import DatasetFacts, TrainerFacts

#: keywords that describe the old head: dropped (the config decides the head now)
_HEAD_KEYWORDS = ("num_labels", "problem_type", "id2label", "label2id")
#: ``from_pretrained`` keywords that locate the checkpoint: given to the config call too
_LOCATE = ("cache_dir", "force_download", "local_files_only", "token", "use_auth_token",
           "revision", "trust_remote_code", "subfolder", "proxies")
#: ``from_pretrained`` keywords about loading the weights: they stay on the model call
_LOAD = ("dtype", "torch_dtype", "device_map", "low_cpu_mem_usage", "ignore_mismatched_sizes",
         "from_tf", "from_flax", "use_safetensors", "quantization_config", "state_dict",
         "output_loading_info", "weights_only", "max_memory", "offload_folder",
         "offload_state_dict", "variant", "key_mapping", "tp_plan", "gguf_file",
         "attn_implementation", "config", "pretrained_model_name_or_path")
_ATTRIBUTES = ('{name}.problem_type = "regression"', "{name}.num_labels = 1")

_HEAD = (
    "from transformers import AutoModelForSequenceClassification\n"
    "model = AutoModelForSequenceClassification.from_pretrained('ckpt', num_labels=2)\n"
)
_SECOND = "model = AutoModelForSequenceClassification.from_pretrained(STAGE1)\ntrainer.train()\n"


def _floats(low: float, high: float) -> tuple[TrainerFacts, ...]:
    data = DatasetFacts("train", ("label",), 10, "label", "float", None, low, high)
    return (TrainerFacts("Trainer", "BertForSequenceClassification", 2, (data,)),)


class RegressionHead(Recipe):
    id = "float-labels-regression"
    category = "float-labels-on-classifier"
    requires_imports = ("transformers",)
    title = "train float targets with a 1-output regression head (set on the config)"
    #: the same fix for a classification checkpoint's problem_type kept under a 1-output
    #: head for float scores (transformers 5.24 raises before from_pretrained's keywords apply)
    also_fixes = ("problem-type-conflict",)
    nothing_to_do = "no *ForSequenceClassification model made above the failing line"
    METADATA_DEPENDENCIES = (  # type: ignore[assignment]  # Recipe narrows the type
        *Recipe.METADATA_DEPENDENCIES, ScopeProvider, ParentNodeProvider)

    examples = (
        Example(  # the second model (loaded from a binary checkpoint) is the one that fails
            before=_HEAD + _SECOND,
            after=("from transformers import AutoConfig, AutoModelForSequenceClassification\n"
                   "model = AutoModelForSequenceClassification.from_pretrained('ckpt', "
                   "num_labels=2)\n"
                   "config = AutoConfig.from_pretrained(STAGE1, problem_type=\"regression\")\n"
                   "config.num_labels = 1\n"
                   "model = AutoModelForSequenceClassification.from_pretrained(\n"
                   "    STAGE1,\n    config=config,\n    ignore_mismatched_sizes=True,\n)\n"
                   "trainer.train()\n"),
            trainers=_floats(0.0, 4.6),
        ),
        Example(  # a function, a module import, config keywords move, `config` is taken
            before=("import transformers\n"
                    "def build(path, config):\n"
                    "    return transformers.BertForSequenceClassification.from_pretrained(\n"
                    "        path,\n"
                    "        num_labels=3,\n"
                    "        hidden_dropout_prob=0.2,\n"
                    "        revision='main',\n"
                    "        dtype='auto',\n"
                    "    )\n"),
            after=("import transformers\n"
                   "def build(path, config):\n"
                   "    head_config = transformers.AutoConfig.from_pretrained(\n"
                   "        path,\n"
                   "        problem_type=\"regression\",\n"
                   "        hidden_dropout_prob=0.2,\n"
                   "        revision='main',\n"
                   "    )\n"
                   "    head_config.num_labels = 1\n"
                   "    return transformers.BertForSequenceClassification.from_pretrained(\n"
                   "        path,\n"
                   "        revision='main',\n"
                   "        dtype='auto',\n"
                   "        config=head_config,\n"
                   "        ignore_mismatched_sizes=True,\n"
                   "    )\n"),
        ),
        Example(  # a config object made with num_labels=2: the head is set where it is made
            before=("from transformers import AutoConfig, AutoModelForSequenceClassification\n"
                    "cfg = AutoConfig.from_pretrained(CKPT, num_labels=2)\n"
                    "cfg.output_hidden_states = False\n"
                    "m = AutoModelForSequenceClassification.from_pretrained(CKPT, config=cfg)\n"),
            after=("from transformers import AutoConfig, AutoModelForSequenceClassification\n"
                   "cfg = AutoConfig.from_pretrained(CKPT)\n"
                   "cfg.problem_type = \"regression\"\n"
                   "cfg.num_labels = 1\n"
                   "cfg.output_hidden_states = False\n"
                   "m = AutoModelForSequenceClassification.from_pretrained(\n"
                   "    CKPT,\n    config=cfg,\n    ignore_mismatched_sizes=True,\n)\n"),
        ),
        Example(  # a model built from a config made elsewhere (a parameter): set before it
            before=("from transformers import BertForSequenceClassification\n"
                    "def make(conf):\n"
                    "    net = BertForSequenceClassification(conf)\n"
                    "    return net\n"),
            after=("from transformers import BertForSequenceClassification\n"
                   "def make(conf):\n"
                   "    conf.problem_type = \"regression\"\n"
                   "    conf.num_labels = 1\n"
                   "    net = BertForSequenceClassification(conf)\n"
                   "    return net\n"),
        ),
        Example(  # from_config with a config made inline: it gets a name first
            before=("import transformers as tr\n"
                    "model = tr.AutoModelForSequenceClassification.from_config(\n"
                    "    tr.BertConfig(num_labels=3, hidden_size=32))\n"),
            after=("import transformers as tr\n"
                   "config = tr.BertConfig(hidden_size=32)\n"
                   "config.problem_type = \"regression\"\n"
                   "config.num_labels = 1\n"
                   "model = tr.AutoModelForSequenceClassification.from_config(\n"
                   "    config)\n"),
        ),
        Example(  # the failing model is not a sequence classifier (loaded below the line)
            before="trainer.train()\n" + _HEAD, line=1,
        ),
        Example(  # keywords the recipe cannot see (**kwargs): left to the user
            before=("from transformers import AutoModelForSequenceClassification\n"
                    "m = AutoModelForSequenceClassification.from_pretrained('c', **opts)\n"),
        ),
        Example(  # made inside a lambda: no statement can go before it
            before=("from transformers import AutoModelForSequenceClassification\n"
                    "make = lambda p: AutoModelForSequenceClassification.from_pretrained(p)\n"),
        ),
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        self.target: cst.Call | None = None
        self.call_edit: cst.Call | None = None  # the new model call
        #: statement -> statements to put before / after it
        self.before: dict[cst.CSTNode, list[str]] = {}
        self.after: dict[cst.CSTNode, list[str]] = {}
        self.creation: tuple[cst.Call, cst.BaseExpression] | None = None  # config call, new
        self.inline: tuple[cst.BaseExpression, str] | None = None  # config expr -> name
        self.names = {n.value for n in find(tree, m.Name()) if isinstance(n, cst.Name)}
        return super().transform_module_impl(tree)

    def _fresh(self, *candidates: str) -> str:
        for name in candidates:
            if name not in self.names:
                self.names.add(name)
                return name
        n = 2
        while f"{candidates[0]}{n}" in self.names:
            n += 1
        self.names.add(f"{candidates[0]}{n}")
        return f"{candidates[0]}{n}"

    # -- finding the model and planning ------------------------------------------------

    def visit_Module(self, node: cst.Module) -> None:
        failing = self.rc.diagnosis.line
        self.tree = node
        for call in m.findall(node, m.Call()):
            assert isinstance(call, cst.Call)
            if self._kind(call) and (
                    not failing or self.get_metadata(PositionProvider, call).start.line
                    <= failing):
                self.target = call  # the last one above the line
        if self.target is not None:
            self._plan(self.target)

    def _kind(self, call: cst.Call) -> str:
        func = call.func
        if self.is_qualified(func, patterns.SEQ_CLS_MODEL):
            return "pretrained"
        if self.is_qualified(func, patterns.SEQ_CLS_FROM_CONFIG):
            return "from_config"
        if self.is_qualified(func, patterns.SEQ_CLS_CLASS) and not (
                isinstance(func, cst.Attribute) and func.attr.value.startswith("Auto")):
            return "constructor"
        return ""

    def _statement(self, node: cst.CSTNode) -> cst.SimpleStatementLine | None:
        """The statement line holding ``node`` when it sits in a block (not a one-line
        suite) and ``node`` is in that statement's scope (not in a lambda/comprehension)."""
        scope = self.get_metadata(ScopeProvider, node, None)
        while not isinstance(node, cst.SimpleStatementLine):
            parent = self.get_metadata(ParentNodeProvider, node, None)
            if parent is None:
                return None
            node = parent
        parent = self.get_metadata(ParentNodeProvider, node, None)
        if not isinstance(parent, (cst.Module, cst.IndentedBlock)) \
                or self.get_metadata(ScopeProvider, node, None) is not scope:
            return None
        return node

    def _plan(self, call: cst.Call) -> None:
        statement = self._statement(call)
        if statement is None:
            self.reason = ("the model is made inside an expression (lambda, comprehension, "
                           "one-line block) where no statement can set its config first")
            return
        if any(a.star for a in call.args):
            self.reason = ("the model call passes **/* arguments the recipe cannot read; "
                           "set num_labels=1 and problem_type='regression' on its config")
            return
        kind = self._kind(call)
        if kind == "pretrained":
            config_arg = keyword(call, "config")
        else:
            config_arg = keyword(call, "config") or next(
                (a for a in call.args if a.keyword is None), None)
        if config_arg is None:
            self._plan_loaded(call, statement)
            return
        new = call
        for name in _HEAD_KEYWORDS:
            new = remove_keyword(new, name)
        value = config_arg.value
        if isinstance(value, cst.Name):
            name = value.value
            if self._is_regression(name):
                self.reason = f"{name}.problem_type is already 'regression'"
                return
            made = self._made_in_block(statement, name)
            where = self.after if made is not None else self.before
            anchor = made[0] if made is not None else statement
            if made is not None:
                self.creation = (made[1], _without_head(made[1]))
        else:
            name = self._fresh("config", "head_config")
            source = _without_head(value) if isinstance(value, cst.Call) else value
            self.before[statement] = [f"{name} = {code(source)}"]
            self.inline = (value, name)
            where, anchor = self.before, statement
        where.setdefault(anchor, []).extend(t.format(name=name) for t in _ATTRIBUTES)
        if kind == "pretrained":
            new = set_keyword(new, "ignore_mismatched_sizes", cst.Name("True"))
        self.call_edit = new

    def _is_regression(self, name: str) -> bool:
        """True when the module sets ``name.problem_type = "regression"`` or makes ``name``
        with ``problem_type="regression"``."""
        regression = m.SimpleString(value=m.MatchIfTrue(
            lambda v: v.strip("'\"") == "regression"))
        return bool(find(self.tree, m.Assign(
            targets=[m.AssignTarget(m.Attribute(m.Name(name), m.Name("problem_type")))],
            value=regression)) or find(self.tree, m.Assign(
                targets=[m.AssignTarget(m.Name(name))],
                value=m.Call(args=[m.ZeroOrMore(), m.Arg(regression,
                                                         keyword=m.Name("problem_type")),
                                   m.ZeroOrMore()]))))

    def _plan_loaded(self, call: cst.Call, statement: cst.SimpleStatementLine) -> None:
        """A model loaded without ``config=``: a config is loaded before it."""
        first = keyword(call, "pretrained_model_name_or_path") or next(
            (a for a in call.args if a.keyword is None), None)
        if first is None:
            self.reason = "the model call names no checkpoint the config could be loaded from"
            return
        name = self._fresh("config", "head_config")
        config_args = [code(first.value), 'problem_type="regression"']
        new = call
        for arg in call.args:
            if arg.keyword is None or arg.keyword.value in _LOAD:
                continue
            word = arg.keyword.value
            if word not in _HEAD_KEYWORDS:
                config_args.append(f"{word}={code(arg.value)}")
            if word not in _LOCATE:
                new = remove_keyword(new, word)
        self.before[statement] = [
            f"{name} = {self._auto_config(call)}.from_pretrained({', '.join(config_args)})",
            f"{name}.num_labels = 1",
        ]
        new = append_keyword(new, "config", cst.Name(name))
        self.call_edit = set_keyword(new, "ignore_mismatched_sizes", cst.Name("True"))

    def _auto_config(self, call: cst.Call) -> str:
        """How the script can name ``transformers.AutoConfig``: through the module name the
        model class is reached by (``transformers.``, ``tr.``), else a new import."""
        func = call.func
        assert isinstance(func, cst.Attribute)
        cls = func.value
        if isinstance(cls, cst.Attribute) and isinstance(cls.value, cst.Name) \
                and self.is_qualified(cls.value, r"transformers"):
            return f"{cls.value.value}.AutoConfig"
        AddImportsVisitor.add_needed_import(self.context, "transformers", "AutoConfig")
        return "AutoConfig"

    def _made_in_block(self, statement: cst.SimpleStatementLine, name: str
                       ) -> tuple[cst.SimpleStatementLine, cst.Call] | None:
        """The ``name = <call>(...)`` statement above ``statement`` in the same block, when
        nothing between them assigns ``name``'s head attributes."""
        block = self.get_metadata(ParentNodeProvider, statement)
        body = list(getattr(block, "body", ()))
        index = body.index(statement)
        for i in range(index - 1, -1, -1):
            stmt = body[i]
            if m.matches(stmt, m.SimpleStatementLine(body=[m.Assign(
                    targets=[m.AssignTarget(m.Name(name))], value=m.Call())])):
                assert isinstance(stmt, cst.SimpleStatementLine)
                between = body[i + 1:index]
                heads = {f"{name}.{word}" for word in _HEAD_KEYWORDS}
                if any(code(t.target).replace(" ", "") in heads for s in between
                       for t in m.findall(s, m.AssignTarget()) if isinstance(t, cst.AssignTarget)):
                    return None
                return stmt, cst.ensure_type(cst.ensure_type(stmt.body[0], cst.Assign).value,
                                             cst.Call)
            if m.findall(stmt, m.AssignTarget(m.Name(name))):
                return None  # assigned in another way (a loop, a branch): not followed
        return None

    # -- applying ------------------------------------------------------------------------

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call
                   ) -> cst.BaseExpression:
        if original_node is self.target and self.call_edit is not None:
            new = self.call_edit
            if self.inline is not None:
                value, name = self.inline
                new = new.with_changes(args=[
                    a.with_changes(value=cst.Name(name)) if a.value is value else a
                    for a in new.args])
            self.changed(original_node, "1-output regression head set on the model's config "
                                        "(problem_type='regression', num_labels=1)")
            return new
        if self.creation is not None and original_node is self.creation[0]:
            return self.creation[1]
        return updated_node

    def leave_SimpleStatementLine(
            self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        before = self.before.get(original_node, [])
        after = self.after.get(original_node, [])
        if not before and not after:
            return updated_node
        return cst.FlattenSentinel([*(cst.parse_statement(s + "\n") for s in before),
                                    updated_node,
                                    *(cst.parse_statement(s + "\n") for s in after)])


def _without_head(call: cst.BaseExpression) -> cst.BaseExpression:
    """A config call without the keywords that describe the old head."""
    if not isinstance(call, cst.Call):
        return call
    for name in _HEAD_KEYWORDS:
        call = remove_keyword(call, name)
    return call
