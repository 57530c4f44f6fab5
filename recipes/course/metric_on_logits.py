"""metric-on-logits: ``compute_metrics`` compares logits with class ids.

``Trainer`` gives ``compute_metrics`` an ``EvalPrediction`` whose predictions are the
model's logits (shape ``(n, num_labels)``, or ``(n, seq, num_labels)`` for token
classification); a metric needs class ids. HF course (chapter 3, "Evaluation"):
``preds = np.argmax(predictions.predictions, axis=-1)``.

The logits variable is the first name unpacked from the argument (``logits, labels =
eval_pred``) or the one assigned from its ``.predictions`` (``preds = p.predictions[0] if
isinstance(p.predictions, tuple) else p.predictions``, as ``run_glue.py`` writes it). The
argmax goes where the logits last change before the metric reads them:

- ``preds = np.squeeze(preds) if is_regression else preds``: the branch that passes the
  logits through becomes ``np.argmax(preds, axis=-1)``; the regression branch is kept;
- ``predictions = logits`` (an alias read by the metric): ``np.argmax(logits, axis=-1)``;
- otherwise ``preds = np.argmax(logits, axis=-1)`` right after the last statement that
  changes the logits (after ``run_ner.py``'s ``np.hstack`` of batches, for instance), and
  the lines after it read ``preds``: class ids get a name of their own, one the function
  does not use (``preds``, else ``class_ids``), never the name of the logits.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.codemod.visitors import AddImportsVisitor

from autofix.toolkit import Example, code, find, insert, keyword
from autofix.toolkit.scope import PlannedEdits, fresh_name, replace_with

#: The names class ids get, the first the function does not use (the course writes
#: ``preds``; a function whose logits are ``preds`` gets ``class_ids``).
CLASS_ID_NAMES = ("preds", "class_ids")


def _assigned(stmt: cst.BaseStatement, name: str) -> bool:
    """``stmt`` (or a statement inside it) binds ``name``."""
    return bool(m.findall(stmt, m.AssignTarget(target=m.Name(name)))) or bool(
        m.findall(stmt, m.AssignTarget(target=m.Tuple(elements=[
            m.ZeroOrMore(), m.Element(m.Name(name)), m.ZeroOrMore()]))))


def _reads(stmt: cst.BaseStatement, name: str) -> bool:
    """``stmt`` reads ``name`` anywhere but in the targets it assigns."""
    targets = {id(n) for t in m.findall(stmt, m.AssignTarget()) for n in m.findall(t, m.Name())}
    return any(id(n) not in targets for n in m.findall(stmt, m.Name(name)))


def _single_assign(stmt: cst.BaseStatement) -> cst.Assign | None:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 \
            and isinstance(stmt.body[0], cst.Assign) and len(stmt.body[0].targets) == 1:
        return stmt.body[0]
    return None


class ArgmaxPredictions(PlannedEdits):
    id = "metric-on-logits"
    category = "metric-on-logits"
    requires_words = (("compute_metrics",),)
    requires_imports = ("transformers",)
    title = "take the argmax of the logits before computing the metric"
    nothing_to_do = ("compute_metrics neither unpacks (predictions, labels) from its argument "
                     "nor reads its .predictions")

    examples = (
        Example(
            before=(
                "from transformers import Trainer\n"
                "\n"
                "def compute_metrics(eval_pred):\n"
                "    logits, labels = eval_pred  # unpack\n"
                "    return {'accuracy': (logits == labels).mean()}\n"
                "\n"
                "trainer = Trainer(model, args, compute_metrics=compute_metrics)\n"
            ),
            after=(
                "import numpy as np\n"
                "from transformers import Trainer\n"
                "\n"
                "def compute_metrics(eval_pred):\n"
                "    logits, labels = eval_pred  # unpack\n"
                "    preds = np.argmax(logits, axis=-1)\n"
                "    return {'accuracy': (preds == labels).mean()}\n"
                "\n"
                "trainer = Trainer(model, args, compute_metrics=compute_metrics)\n"
            ),
        ),
        Example(  # the EvalPrediction's fields; the regression branch keeps its squeeze
            before=(
                "import numpy as np\n"
                "from transformers import Trainer\n"
                "def compute_metrics(p):\n"
                "    preds = p.predictions[0] if isinstance(p.predictions, tuple) "
                "else p.predictions\n"
                "    preds = np.squeeze(preds) if is_regression else preds\n"
                "    return metric.compute(predictions=preds, references=p.label_ids)\n"
                "Trainer(model, args, compute_metrics=compute_metrics)\n"
            ),
            after=(
                "import numpy as np\n"
                "from transformers import Trainer\n"
                "def compute_metrics(p):\n"
                "    preds = p.predictions[0] if isinstance(p.predictions, tuple) "
                "else p.predictions\n"
                "    preds = np.squeeze(preds) if is_regression else np.argmax(preds, "
                "axis=-1)\n"
                "    return metric.compute(predictions=preds, references=p.label_ids)\n"
                "Trainer(model, args, compute_metrics=compute_metrics)\n"
            ),
        ),
        Example(  # an alias the metric reads: the argmax goes on that line
            before=(
                "import numpy as np\n"
                "from transformers import Trainer\n"
                "def compute_metrics(eval_preds):\n"
                "    logits, labels = eval_preds\n"
                "    predictions = logits\n"
                "    return metric.compute(predictions=predictions, references=labels)\n"
                "Trainer(model, args, compute_metrics=compute_metrics)\n"
            ),
            after=(
                "import numpy as np\n"
                "from transformers import Trainer\n"
                "def compute_metrics(eval_preds):\n"
                "    logits, labels = eval_preds\n"
                "    predictions = np.argmax(logits, axis=-1)\n"
                "    return metric.compute(predictions=predictions, references=labels)\n"
                "Trainer(model, args, compute_metrics=compute_metrics)\n"
            ),
        ),
        Example(  # token logits joined from batches first: the argmax after the join
            before=(
                "import numpy as np\n"
                "from transformers import Trainer\n"
                "def compute_metrics(p):\n"
                "    predictions, labels = p\n"
                "    if not concat:\n"
                "        predictions = np.hstack(predictions)\n"
                "        labels = np.hstack(labels)\n"
                "\n"
                "    true_predictions = [[names[i] for i in row] for row in predictions]\n"
                "    return metric.compute(predictions=true_predictions, references=labels)\n"
                "Trainer(model, args, compute_metrics=compute_metrics)\n"
            ),
            after=(
                "import numpy as np\n"
                "from transformers import Trainer\n"
                "def compute_metrics(p):\n"
                "    predictions, labels = p\n"
                "    if not concat:\n"
                "        predictions = np.hstack(predictions)\n"
                "        labels = np.hstack(labels)\n"
                "    preds = np.argmax(predictions, axis=-1)\n"
                "\n"
                "    true_predictions = [[names[i] for i in row] for row in preds]\n"
                "    return metric.compute(predictions=true_predictions, references=labels)\n"
                "Trainer(model, args, compute_metrics=compute_metrics)\n"
            ),
        ),
        Example(  # the logits are named preds: the class ids get another name
            before=(
                "from transformers import Trainer\n"
                "\n"
                "def compute_metrics(p):\n"
                "    preds, labels = p\n"
                "    acc = (preds == labels).mean()\n"
                "    return {'accuracy': acc, 'shape': preds.shape}\n"
                "\n"
                "Trainer(model, args, compute_metrics=compute_metrics)\n"
            ),
            after=(
                "import numpy as np\n"
                "from transformers import Trainer\n"
                "\n"
                "def compute_metrics(p):\n"
                "    preds, labels = p\n"
                "    class_ids = np.argmax(preds, axis=-1)\n"
                "    acc = (class_ids == labels).mean()\n"
                "    return {'accuracy': acc, 'shape': class_ids.shape}\n"
                "\n"
                "Trainer(model, args, compute_metrics=compute_metrics)\n"
            ),
        ),
        Example(  # the logits' name is bound again later: that name is rebound
            before=(
                "import numpy as np\n"
                "from transformers import Trainer\n"
                "def compute_metrics(p):\n"
                "    logits, labels = p\n"
                "    acc = accuracy.compute(predictions=logits, references=labels)\n"
                "    logits = None\n"
                "    return acc\n"
                "Trainer(model, args, compute_metrics=compute_metrics)\n"
            ),
            after=(
                "import numpy as np\n"
                "from transformers import Trainer\n"
                "def compute_metrics(p):\n"
                "    logits, labels = p\n"
                "    logits = np.argmax(logits, axis=-1)\n"
                "    acc = accuracy.compute(predictions=logits, references=labels)\n"
                "    logits = None\n"
                "    return acc\n"
                "Trainer(model, args, compute_metrics=compute_metrics)\n"
            ),
        ),
        Example(  # already takes the argmax
            before=(
                "import numpy as np\n"
                "from transformers import Trainer\n"
                "def metrics(p):\n"
                "    preds, labels = p\n"
                "    preds = np.argmax(preds, axis=-1)\n"
                "    return {'accuracy': (preds == labels).mean()}\n"
                "Trainer(model, args, compute_metrics=metrics)\n"
            ),
        ),
        Example(  # both branches pass the logits: which one is a regression is unknown
            before=(
                "from transformers import Trainer\n"
                "def compute_metrics(p):\n"
                "    preds = p.predictions\n"
                "    preds = preds if flag else preds\n"
                "    return metric.compute(predictions=preds, references=p.label_ids)\n"
                "Trainer(model, args, compute_metrics=compute_metrics)\n"
            ),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        names: set[str] = set()
        for call in self.program.calls:
            if self.program.is_trainer_call(call):
                arg = keyword(call, "compute_metrics")
                if arg is not None and isinstance(arg.value, cst.Name):
                    names.add(arg.value.value)
        if not names:
            self.reason = "no Trainer(compute_metrics=<function>) found"
            return
        for node in find(self.program.tree, m.FunctionDef()):
            assert isinstance(node, cst.FunctionDef)
            if node.name.value in names and not self.edits:
                self._fix(node)

    def _fix(self, func: cst.FunctionDef) -> None:
        if m.findall(func, m.Call(func=m.Attribute(attr=m.Name("argmax")))):
            self.reason = f"{func.name.value} already takes an argmax"
            return
        body = list(func.body.body) if isinstance(func.body, cst.IndentedBlock) else []
        params = [p.name.value for p in func.params.params]
        found = self._logits(body, params)
        if found is None:
            return
        start, name = found
        last = start
        for i in range(start + 1, len(body)):
            if _assigned(body[i], name):
                last = i
                continue
            if _reads(body[i], name):
                alias = _single_assign(body[i])
                if alias is not None and m.matches(alias.value, m.Name(name)) \
                        and i == last + 1:  # predictions = logits, read by the metric
                    self._argmax(alias.value, name, f"line {self.program.line(body[i])}")
                    return
                break
        assign = _single_assign(body[last])
        if last > start and assign is not None and isinstance(assign.value, cst.IfExp):
            self._branch(assign.value, name, func)
            return
        self._insert_after(func, body, last, name)

    def _logits(self, body: list[cst.BaseStatement], params: list[str]
                ) -> tuple[int, str] | None:
        """(index of the statement that takes the logits from the argument, their name)."""
        for i, stmt in enumerate(body):
            assign = _single_assign(stmt)
            if assign is None:
                continue
            target = assign.targets[0].target
            if m.matches(target, m.Tuple(elements=[m.Element(m.Name()), m.Element(m.Name())])) \
                    and m.matches(assign.value, m.Name()):
                first = cst.ensure_type(target, cst.Tuple).elements[0].value
                return i, cst.ensure_type(first, cst.Name).value
            if isinstance(target, cst.Name) and any(
                    m.findall(assign.value, m.Attribute(value=m.Name(p), attr=m.Name(
                        "predictions"))) for p in params):
                return i, target.value
        return None

    def _numpy(self, at: cst.CSTNode) -> None:
        """Import numpy as np unless ``np`` is already bound where it is used (a notebook
        imports it in an earlier cell)."""
        if not any(isinstance(t, (cst.Import, cst.ImportFrom))
                   for t in self.program.resolve("np", at)):
            AddImportsVisitor.add_needed_import(self.context, "numpy", asname="np")

    def _argmax(self, node: cst.BaseExpression, name: str, where: str) -> None:
        self._numpy(node)
        new = cst.parse_expression(f"np.argmax({code(node)}, axis=-1)")
        self.plan_edit(node, replace_with(new), f"np.argmax({name}, axis=-1) at {where}")

    def _branch(self, value: cst.IfExp, name: str, func: cst.FunctionDef) -> None:
        """``x = f(x) if c else x``: the branch passing the logits through (not the one a
        regression test selects) gets the argmax."""
        passes = [b for b in (value.body, value.orelse) if m.matches(b, m.Name(name))]
        if len(passes) != 1:
            self.reason = (f"both branches of {code(value)} pass the logits through: which "
                           "one is a regression is not known")
            return
        branch = passes[0]
        if branch is value.body and "regress" in code(value.test).lower():
            self.reason = f"{code(value.test)} selects the branch passing the logits"
            return
        self._argmax(branch, name, f"line {self.program.line(value)}, the branch for class "
                                   "ids")

    def _insert_after(self, func: cst.FunctionDef, body: list[cst.BaseStatement], index: int,
                      name: str) -> None:
        """``preds = np.argmax(logits, axis=-1)`` after ``body[index]``, and ``preds`` read
        where the later lines read ``logits``: class ids get a name of their own (one the
        function does not use anywhere: :data:`CLASS_ID_NAMES`, else :func:`fresh_name`),
        unless a later line binds
        ``logits`` again (then ``logits`` itself is rebound, so each line reads what it
        read before)."""
        self._numpy(body[index])
        later = body[index + 1:]
        reads = [] if any(_assigned(stmt, name) for stmt in later) else \
            [n for stmt in later for n in self._reads_of(stmt, name, body[index])]
        taken = [*self.program.visible_names(body[index]),
                 *(cst.ensure_type(n, cst.Name).value for n in m.findall(func, m.Name()))]
        new = next((n for n in CLASS_ID_NAMES if n not in taken),
                   fresh_name(CLASS_ID_NAMES[0], taken)) if reads else name
        line = f"{new} = np.argmax({name}, axis=-1)"

        def edit(node: cst.CSTNode) -> cst.CSTNode:
            block = cst.ensure_type(node, cst.IndentedBlock)
            stmts = list(block.body)
            stmts.insert(index + 1, insert.parse_statement(line))
            return block.with_changes(body=stmts)

        self.plan_edit(func.body, edit, f"{line} in {func.name.value}")
        for read in reads:
            self.plan_edit(read, replace_with(cst.Name(new)),
                           f"{new} read at line {self.program.line(read)}")

    def _reads_of(self, stmt: cst.BaseStatement, name: str, bound: cst.CSTNode
                  ) -> list[cst.Name]:
        """The reads of ``name`` in ``stmt`` that see the local variable of the function
        holding ``bound`` (LibCST's scope accesses: never an attribute, a keyword, or a
        name a comprehension binds of its own)."""
        local = self.program.scope(bound)
        found = []
        for node in m.findall(stmt, m.Name(name)):
            scope = self.program.scope(node)
            if scope is None or not isinstance(node, cst.Name):
                continue
            if any(access.node is node and any(ref.scope is local for ref in access.referents)
                   for access in scope.accesses[name]):
                found.append(node)
        return found

