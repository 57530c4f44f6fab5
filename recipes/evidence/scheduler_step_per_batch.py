"""scheduler-step-per-batch: a schedule counted in optimizer steps, stepped once per epoch.

``get_linear_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps)`` is
sized in optimizer steps; called once per epoch, its rate stays at the warmup's 0 for the
whole first epoch (the weights do not move) and the schedule never gets past its warmup.
The probe (``autofix/run/child/schedules.py``) compares the real scheduler with the loop's
batches per epoch and epochs: stepped once per epoch its first epoch runs under 1/100 of
its peak rate, while stepped after each optimizer step it rises within the first epoch and
lasts to the end of training (``schedule`` facts, ``sized: "steps"``); a schedule that
makes sense per epoch is never judged so.

The fix moves ``scheduler.step()`` into the batch loop, right after the optimizer's
``step()`` (under its condition when the step has one: gradient accumulation). The
statement is the scheduler's ``step()`` beside a training loop in the same block (after
the epoch's batch loop, or before it); declines when there is none, or the loop has no
optimizer step statement to follow.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from autofix.categories.catalogue.evidence import schedule_text
from autofix.toolkit import Example, NotApplicable, code
from autofix.toolkit.scope import PlannedEdits

from ._training import in_file, is_optimizer, is_scheduler, move_statement, receiver
from ._training import trains as trains_at
from .scheduler_step_per_epoch import schedule_facts

_HEAD = ("scheduler = get_linear_schedule_with_warmup(optimizer, 10, len(loader) * 3)\n"
         "for epoch in range(3):\n    for batch in loader:\n"
         "        model(**batch).loss.backward()\n")


class SchedulerStepPerBatch(PlannedEdits):
    id = "scheduler-step-per-batch"
    category = "scheduler-stepped-per-epoch"
    title = "step the lr scheduler after each optimizer step, inside the batch loop (its " \
            "schedule counts optimizer steps)"
    requires_words = (("step",),)
    nothing_to_do = "no scheduler.step() statement after a batch loop that steps an optimizer"

    examples = (
        Example(
            before=_HEAD + "        optimizer.step()\n        optimizer.zero_grad()\n"
                           "    scheduler.step()\n    print(epoch)\n",
            after=_HEAD + "        optimizer.step()\n        scheduler.step()\n"
                          "        optimizer.zero_grad()\n    print(epoch)\n",
            run_facts=schedule_facts(7, sized="steps", stepped="epoch"),
        ),
        Example(  # gradient accumulation: under the optimizer step's condition
            before=_HEAD + "        if i % 4 == 3:\n            optimizer.step()\n"
                           "            optimizer.zero_grad()\n    scheduler.step()\n"
                           "    print(epoch)\n",
            after=_HEAD + "        if i % 4 == 3:\n            optimizer.step()\n"
                          "            scheduler.step()\n            optimizer.zero_grad()\n"
                          "    print(epoch)\n",
            run_facts=schedule_facts(8, sized="steps", stepped="epoch"),
        ),
        Example(  # stepped once before a single pass over the data
            before="scheduler = get_linear_schedule_with_warmup(optimizer, 3, len(loader))\n"
                   "scheduler.step()\nfor batch in loader:\n"
                   "    model(**batch).loss.backward()\n    optimizer.step()\n"
                   "    optimizer.zero_grad()\n",
            after="scheduler = get_linear_schedule_with_warmup(optimizer, 3, len(loader))\n"
                  "for batch in loader:\n    model(**batch).loss.backward()\n"
                  "    optimizer.step()\n    scheduler.step()\n    optimizer.zero_grad()\n",
            run_facts=schedule_facts(2, sized="steps", stepped="epoch"),
        ),
        Example(  # a class's train_step summed over the batches by a generator
            before="class Runner:\n    def train_step(self, batch):\n"
                   "        self.model(batch).backward()\n        self.optimizer.step()\n"
                   "        return 0.0\n\n    def fit(self, loader, epochs):\n"
                   "        for epoch in range(epochs):\n"
                   "            total = sum(self.train_step(b) for b in loader)\n"
                   "            self.scheduler.step()\n",
            after="class Runner:\n    def train_step(self, batch):\n"
                  "        self.model(batch).backward()\n        self.optimizer.step()\n"
                  "        self.scheduler.step()\n        return 0.0\n\n"
                  "    def fit(self, loader, epochs):\n        for epoch in range(epochs):\n"
                  "            total = sum(self.train_step(b) for b in loader)\n",
            run_facts=schedule_facts(10, sized="steps", stepped="epoch"),
        ),
        Example(  # the run judged the per-epoch schedule right: not this recipe's fault
            before=_HEAD + "        optimizer.step()\n    scheduler.step()\n"
                           "    print(epoch)\n",
            run_facts=schedule_facts(6, sized="", stepped="epoch"),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        entries = [e for e in self.rc.facts.get("schedule") or []
                   if isinstance(e, dict) and e.get("sized") == "steps"
                   and e.get("stepped") != "batch"]
        if not entries:
            raise NotApplicable("the run shows no schedule counted in optimizer steps "
                                "stepped once per epoch")
        sites = [e["site"] for e in entries if isinstance(e.get("site"), dict)]
        if sites and not any(in_file(self, s) for s in sites):
            raise NotApplicable("the scheduler is stepped in another file")
        lines = {int(s.get("line") or 0) for s in sites if in_file(self, s)}
        for block in m.findall(tree, m.IndentedBlock() | m.Module()):
            assert isinstance(block, (cst.IndentedBlock, cst.Module))
            body = list(block.body)
            for i, stmt in enumerate(body):
                name = receiver(stmt, "step")
                if name is None or not is_scheduler(tree, name) or \
                        (lines and self.program.line(stmt) not in lines):
                    continue
                found = next((t for s in (*reversed(body[:i]), *body[i + 1:])
                              if (t := self._batch_step(tree, s, name)) is not None), None)
                if found is None:
                    continue
                step, text = found
                assert isinstance(stmt, cst.SimpleStatementLine)
                move_statement(self, stmt, step,
                               f"{code(stmt).strip()} moved into the batch loop, after "
                               f"{code(step).strip()}: {schedule_text(entries[0])} counts "
                               "optimizer steps; stepped once per epoch its first epoch ran "
                               f"at {entries[0].get('first_epoch', 0):.3g} x its peak rate",
                               text=text)
        if not self.plan:
            raise NotApplicable(self.nothing_to_do)

    def _batch_step(self, tree: cst.Module, sibling: cst.BaseStatement, name: str
                    ) -> tuple[cst.SimpleStatementLine, str] | None:
        """Where the scheduler ``name`` is stepped in the batch loop ``sibling`` stands for,
        and the statement as written there: after the loop's own optimizer step, or after
        the optimizer step of the module's function it calls once per batch (a
        ``train_step``, from a ``for`` or a comprehension), the scheduler named as that
        function sees it (``self.x`` in a method of the same class, a global)."""
        loops: list[cst.CSTNode] = []
        if isinstance(sibling, (cst.For, cst.While)):
            loops.append(sibling.body)
        elif isinstance(sibling, cst.SimpleStatementLine):
            loops += m.findall(sibling, m.ListComp() | m.GeneratorExp() | m.SetComp())
        for loop in loops:
            if not trains_at(self.program, loop):
                continue
            step = self._optimizer_step(tree, loop)
            if step is not None:
                return step, f"{name}.step()"
            for call in m.findall(loop, m.Call()):
                assert isinstance(call, cst.Call)
                func = self.program.function_called(call)
                step = self._optimizer_step(tree, func) if func is not None else None
                there = self._seen_in(func, call, name) if func is not None else None
                if step is not None and there is not None:
                    return step, f"{there}.step()"
        return None

    def _seen_in(self, func: cst.FunctionDef, call: cst.Call, name: str) -> str | None:
        """``name`` as ``func`` (called at ``call``) can read it: ``self.x`` when ``func``
        is a method of the caller's class, a name ``func`` neither takes nor assigns."""
        root = name.partition(".")[0]
        if root == "self":
            holder = self.program.parent(func)
            owner = self.program.parent(holder) if holder is not None else None
            return name if isinstance(owner, cst.ClassDef) and \
                self.program.class_of(call) is owner else None
        params = {p.name.value for p in (*func.params.posonly_params, *func.params.params,
                                         *func.params.kwonly_params)}
        assigned = {code(t.target) for t in m.findall(func, m.AssignTarget())
                    if isinstance(t, cst.AssignTarget)}
        return name if root not in params and root not in assigned else None

    @staticmethod
    def _optimizer_step(tree: cst.Module, loop: cst.CSTNode) -> cst.SimpleStatementLine | None:
        """The first ``<optimizer>.step()`` statement in ``loop``, in any of its blocks."""
        for stmt in m.findall(loop, m.SimpleStatementLine()):
            name = receiver(stmt, "step")
            if name is not None and is_optimizer(tree, name):
                assert isinstance(stmt, cst.SimpleStatementLine)
                return stmt
        return None
