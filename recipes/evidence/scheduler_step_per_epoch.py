"""scheduler-step-per-epoch: a schedule counted in epochs, stepped after every batch.

``StepLR(optimizer, step_size=1, gamma=0.1)`` decays the rate by 10 at every
``scheduler.step()`` call; written for epochs and called inside the batch loop, the rate
is 1e-20 within the first epoch and the model stays at chance, while the script runs to
its end without an error. The probe (``autofix/run/child/schedules.py``) compares the real
scheduler (its class and parameters: ``StepLR``'s ``step_size``, ``MultiStepLR``'s
``milestones``, ``ExponentialLR``'s ``gamma``, ``CosineAnnealingLR``'s ``T_max``, a
``LambdaLR``'s own function) with the loop's batches per epoch and epochs, and counts the
script's ``step()`` calls: stepped after every optimizer step, its rate falls under 1/100
of its peak within the first epoch, and stepped once per epoch it would not before the
last epoch (``schedule`` facts, ``sized: "epochs"``). Schedules sized in optimizer steps
(transformers' ``get_*_schedule*``, ``OneCycleLR``) are never judged so.

The fix puts ``scheduler.step()`` at the loop level its schedule counts: out of the batch
loop, right after it (inside the epoch loop, or at the end of the function that runs one
epoch). The statement is the one the run saw called (its line); declines when that line
is not in a loop that trains, or the statement is alone in its block.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from autofix.categories.catalogue.evidence import schedule_text
from autofix.toolkit import Example, NotApplicable, code
from autofix.toolkit.scope import PlannedEdits

from ._training import (
    at_call_site,
    batch_loop_at,
    in_file,
    is_scheduler,
    loop_of,
    move_statement,
    receiver,
    statement_at,
)
from ._training import trains as trains_at


def schedule_facts(line: int, sized: str = "epochs", stepped: str = "batch"
                   ) -> dict[str, Any]:
    """The run's ``schedule`` facts for an example: a ``StepLR`` stepped at ``line``."""
    return {"schedule": [{
        "class": "StepLR", "params": {"step_size": 1, "gamma": 0.1}, "calls": 18,
        "stepped": stepped, "site": {"file": "script.py", "line": line, "function": "main"},
        "per_epoch": 16, "epochs": 2, "optimizer_steps": 19, "sized": sized,
        "collapse_step": 3, "per_epoch_collapse": None, "first_epoch": 1.0, "peak": 1.0}]}


_HEAD = "scheduler = StepLR(optimizer, step_size=1, gamma=0.1)\n"


class SchedulerStepPerEpoch(PlannedEdits):
    id = "scheduler-step-per-epoch"
    category = "scheduler-stepped-per-batch"
    title = "step the lr scheduler once per epoch, after the batch loop (its schedule counts " \
            "epochs)"
    requires_words = (("step",),)
    nothing_to_do = "no scheduler.step() statement in a training loop at the line the run named"

    examples = (
        Example(  # module level: after the batch loop, inside the epoch loop
            before=_HEAD + "for epoch in range(2):\n    for batch in loader:\n"
                           "        model(**batch).loss.backward()\n        optimizer.step()\n"
                           "        scheduler.step()  # decay\n"
                           "        optimizer.zero_grad()\n    evaluate(model)\n",
            after=_HEAD + "for epoch in range(2):\n    for batch in loader:\n"
                          "        model(**batch).loss.backward()\n        optimizer.step()\n"
                          "        optimizer.zero_grad()\n    scheduler.step()  # decay\n"
                          "    evaluate(model)\n",
            run_facts=schedule_facts(6),
        ),
        Example(  # a function that trains one epoch: at its end, after the loop
            before="def train_one_epoch(model, loader, optimizer, scheduler):\n"
                   "    for batch in loader:\n        model(**batch).loss.backward()\n"
                   "        optimizer.step()\n        scheduler.step()\n"
                   "        optimizer.zero_grad()\n    return model\n",
            after="def train_one_epoch(model, loader, optimizer, scheduler):\n"
                  "    for batch in loader:\n        model(**batch).loss.backward()\n"
                  "        optimizer.step()\n        optimizer.zero_grad()\n"
                  "    scheduler.step()\n    return model\n",
            run_facts=schedule_facts(5),
        ),
        Example(  # a class's train_step called from a comprehension over the batches
            before="class Engine:\n    def train_step(self, batch):\n"
                   "        self.model(batch).backward()\n        self.optimizer.step()\n"
                   "        self.scheduler.step()\n\n"
                   "    def fit(self, loader, epochs):\n        for epoch in range(epochs):\n"
                   "            losses = [self.train_step(b) for b in loader]\n"
                   "            print(epoch)\n",
            after="class Engine:\n    def train_step(self, batch):\n"
                  "        self.model(batch).backward()\n        self.optimizer.step()\n\n"
                  "    def fit(self, loader, epochs):\n        for epoch in range(epochs):\n"
                  "            losses = [self.train_step(b) for b in loader]\n"
                  "            self.scheduler.step()\n            print(epoch)\n",
            run_facts=schedule_facts(5),
        ),
        Example(  # a step function given the scheduler: the caller's name for it
            before="def step(model, batch, opt, sched):\n    model(batch).backward()\n"
                   "    opt.step()\n    sched.step()\n\n\n"
                   "for epoch in range(2):\n    for batch in loader:\n"
                   "        step(model, batch, optimizer, scheduler)\n",
            after="def step(model, batch, opt, sched):\n    model(batch).backward()\n"
                  "    opt.step()\n\n\n"
                  "for epoch in range(2):\n    for batch in loader:\n"
                  "        step(model, batch, optimizer, scheduler)\n    scheduler.step()\n",
            run_facts=schedule_facts(4),
        ),
        Example(  # the run judged the schedule sized in steps: not this recipe's fault
            before=_HEAD + "for batch in loader:\n    model(**batch).loss.backward()\n"
                           "    optimizer.step()\n    scheduler.step()\n",
            run_facts=schedule_facts(5, sized=""),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        entries = [e for e in self.rc.facts.get("schedule") or []
                   if isinstance(e, dict) and e.get("sized") == "epochs"
                   and e.get("stepped") == "batch" and isinstance(e.get("site"), dict)]
        if not entries:
            raise NotApplicable("the run shows no schedule counted in epochs stepped per batch")
        mine = [e for e in entries if in_file(self, e["site"])]
        if not mine:
            raise NotApplicable("the scheduler is stepped in another file")
        for entry in mine:
            stmt = statement_at(self, int(entry["site"].get("line") or 0), "step")
            name = receiver(stmt, "step") if stmt is not None else None
            if stmt is None or name is None or not is_scheduler(tree, name):
                continue
            why = (f"{{}} moved after the batch loop ({{}}): {schedule_text(entry)} counts "
                   "epochs; stepped after every optimizer step its rate fell under 1/100 of "
                   f"its peak at call {entry.get('collapse_step')}, within the first of "
                   f"{entry.get('epochs')} epochs of {entry.get('per_epoch')} steps")
            loop = loop_of(self.program, stmt)
            if loop is not None:
                if trains_at(self.program, loop.body):
                    move_statement(self, stmt, loop, why.format(
                        code(stmt).strip(), code(loop).splitlines()[0].strip()))
                continue
            self._out_of_step_function(stmt, name, why)
        if not self.plan:
            raise NotApplicable(self.nothing_to_do)

    def _out_of_step_function(self, stmt: cst.SimpleStatementLine, name: str, why: str
                              ) -> None:
        """``stmt`` in a function of one training step (no loop in it): moved after the
        batch loop around the function's one call site in a loop (a ``for`` or a
        comprehension), in the caller's names."""
        func = self.program.function_of(stmt)
        if func is None:
            return
        sites = [(site, loop) for site in self.program.call_sites(func)
                 if (loop := batch_loop_at(self.program, site)) is not None]
        if len(sites) != 1:
            return
        site, loop = sites[0]
        there = at_call_site(self.program, func, site, name)
        if there is None:
            return
        text = f"{there}.step()"
        move_statement(self, stmt, loop, why.format(
            f"{code(stmt).strip()} (in {func.name.value}())",
            code(loop).splitlines()[0].strip()), text=text)
