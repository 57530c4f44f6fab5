"""Training probes installed into the child without changing the user's file.

Each probe is applied right after its library module is imported (``PostImportHook``):

* ``transformers.trainer``: ``Trainer`` reports its datasets and ``num_labels``, records
  each training step's loss and learning rate, and gets a callback that stops training
  cleanly (``should_training_stop``) at the step budget or on a confirmed symptom.
* ``tf_keras`` / ``keras``: every ``Model.fit`` gets a callback recording per-step loss
  (derived from Keras' running mean) and learning rate, the compiled loss and optimizer,
  and setting ``stop_training`` at the budget or on a symptom.
* ``torch.optim.optimizer`` / ``torch._tensor``: for hand-written loops, the scalar given
  to ``Tensor.backward`` and a global optimizer step post-hook record each step; at the
  budget the training ``DataLoader`` loop ends (:mod:`loops`) and the script runs on to
  its evaluation; a symptom, or a step after that, raises :class:`AutofixStop` out of
  ``optimizer.step()``.
* ``transformers.modeling_utils``: every model call with ``labels`` keeps a reference to
  its labels and logits, so a NaN step can be traced to the samples that caused it.
* ``datasets.arrow_dataset``: ``to_tf_dataset`` reports the dataset it converts, and
  ``torch.utils.data.dataloader``: a ``DataLoader`` reports the dataset it batches.

Gradient norms and the inputs' scale are recorded by :mod:`numeric`.
"""

from __future__ import annotations

import importlib.abc
import math
import sys
import types
from collections.abc import Callable
from typing import Any

from . import (
    chance,
    early,
    eval_metrics,
    events,
    integrity,
    loops,
    modes,
    numeric,
    phases,
    plan,
    preflight,
    preflight_lm,
    sampling,
    saved,
    schedules,
    step_probe,
)
from .events import (
    AutofixStop,
    State,
    emit,
    note_model,
    note_predictions,
    record_step,
)

_LABEL_COLUMNS = ("labels", "label", "label_ids")


class PostImportHook(importlib.abc.MetaPathFinder):
    """Calls ``patch(module)`` right after the module ``name`` is executed, whoever imports
    it and however (``transformers`` loads submodules lazily)."""

    def __init__(self, name: str, patch: Callable[[types.ModuleType], None]) -> None:
        self.name = name
        self.patch = patch

    def _wrap(self, exec_module: Any) -> Any:
        patch, name = self.patch, self.name

        def exec_and_patch(module: types.ModuleType) -> None:
            exec_module(module)
            try:
                patch(module)  # _chain: each probe recorded
            except Exception as exc:  # noqa: BLE001
                emit("probe_error", where=name, message=repr(exc))

        return exec_and_patch

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader.exec_module = self._wrap(  # type: ignore[method-assign]
                    spec.loader.exec_module)
                return spec
        return None


class Replaced:
    """What the probes replaced, when :attr:`RECORD` is set (the warm interpreter: a fork
    that runs a tool, such as the API check, instead of a training run undoes it with
    :func:`unpatch` and sees the libraries as they are installed)."""

    RECORD = False
    #: (owner, attribute, the value before; :data:`_ABSENT` when there was none), in order
    log: list[tuple[Any, str, Any]] = []


_ABSENT = object()


def _owners(module: types.ModuleType) -> list[Any]:
    """``module`` and the classes its namespace binds: where a probe's patch writes."""
    seen: dict[int, Any] = {id(module): module}
    for value in list(vars(module).values()):
        if isinstance(value, type):
            seen.setdefault(id(value), value)
    return list(seen.values())


def recorded(patch: Callable[[types.ModuleType], None], module: types.ModuleType) -> None:
    """``patch(module)``, noting in :class:`Replaced` each attribute it changed (on the
    module or a class it binds) when :attr:`Replaced.RECORD` is set."""
    if not Replaced.RECORD:
        patch(module)
        return
    before = [(owner, dict(vars(owner))) for owner in _owners(module)]
    try:
        patch(module)
    finally:
        for owner, old in before:
            for key, value in list(vars(owner).items()):
                was = old.get(key, _ABSENT)
                if was is not value:
                    Replaced.log.append((owner, key, was))


def unpatch() -> int:
    """Undo every recorded patch (last first) and remove the import hooks, so what runs
    next sees the installed libraries unchanged; returns how many attributes were put
    back."""
    undone = 0
    for owner, key, was in reversed(Replaced.log):
        try:
            if was is _ABSENT:
                delattr(owner, key)
            else:
                setattr(owner, key, was)
            undone += 1
        except (AttributeError, TypeError):
            pass
    Replaced.log.clear()
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, PostImportHook)]
    return undone


# --- facts -------------------------------------------------------------------------


def dataset_facts(role: str, ds: Any) -> dict[str, Any]:
    """Columns, size and label range of a ``datasets.Dataset`` (whole split, not a batch)."""
    facts: dict[str, Any] = {"role": role,
                             "columns": list(getattr(ds, "column_names", None) or [])}
    try:
        facts["num_rows"] = len(ds)
    except Exception:  # noqa: BLE001 - IterableDataset and friends have no len
        facts["num_rows"] = None
    column = next((c for c in _LABEL_COLUMNS if c in facts["columns"]), "")
    facts["label_column"] = column
    if not column:
        return facts
    feature = (getattr(ds, "features", None) or {}).get(column)
    if feature is not None and type(feature).__name__ == "ClassLabel":
        facts["label_kind"] = "int"
        facts["label_classes"] = int(feature.num_classes)
        return facts
    if type(feature).__name__ in ("Sequence", "List", "LargeList"):
        facts.update(_list_label_facts(ds, column, feature))
        return facts
    try:
        values = [v for v in ds.unique(column) if v is not None]
    except Exception:  # noqa: BLE001 - not a datasets.Dataset
        return facts
    if values and all(isinstance(v, str) for v in values):
        facts["label_kind"] = "str"
    elif values and all(isinstance(v, (int, float)) for v in values):
        facts["label_kind"] = "int" if all(float(v).is_integer() for v in values) else "float"
        facts["label_min"] = min(values)
        facts["label_max"] = max(values)
    return facts


def _list_label_facts(ds: Any, column: str, feature: Any) -> dict[str, Any]:
    """A label column of lists (per-token tags, multi-hot rows): ``int-list`` or
    ``float-list``, the ``ClassLabel`` count of its items, else the range of its values over
    the whole split (the ignore index -100 left out), read from the Arrow column."""
    inner: Any = getattr(feature, "feature", None)
    if type(inner).__name__ == "ClassLabel":
        return {"label_kind": "int-list", "label_classes": int(inner.num_classes)}
    try:
        import pyarrow.compute as pc

        flat = pc.list_flatten(ds.data.column(column))
        kind = "int-list" if str(flat.type).startswith(("int", "uint")) else \
            "float-list" if str(flat.type).startswith(("float", "double", "halffloat")) else ""
        if not kind:
            return {}
        kept = flat.filter(pc.not_equal(flat, -100)) if kind == "int-list" else flat
        bounds = pc.min_max(kept).as_py()
        return {"label_kind": kind, "label_min": bounds["min"], "label_max": bounds["max"]}
    except Exception:  # noqa: BLE001 - a dataset without an Arrow table: no range
        return {}


def trainer_facts(trainer: Any) -> dict[str, Any]:
    model = getattr(trainer, "model", None)
    config = getattr(model, "config", None)
    datasets = []
    for role, ds in (("train", trainer.train_dataset), ("eval", trainer.eval_dataset)):
        if isinstance(ds, dict):
            for name, sub in ds.items():
                datasets.append(dataset_facts(f"{role}:{name}", sub))
        elif ds is not None:
            datasets.append(dataset_facts(role, ds))
    return {
        "trainer_class": type(trainer).__name__,
        "model_class": type(model).__name__,
        "num_labels": getattr(config, "num_labels", None),
        "datasets": datasets,
    }


def _float(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


# --- transformers Trainer ------------------------------------------------------------


def patch_trainer(module: types.ModuleType) -> None:
    trainer_cls = getattr(module, "Trainer", None)
    if trainer_cls is None or getattr(trainer_cls, "_autofix_patched", False):
        return
    from transformers.trainer_callback import TrainerCallback  # the child's transformers

    class StopWhenTold(TrainerCallback):
        """Stops training cleanly at the step budget or on a confirmed symptom."""

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            State.total = plan.trainer_total(args, state)
            return control

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            if State.stop:
                control.should_training_stop = True
                if State.stop == "budget":  # an early evaluation that failed (early.py)
                    early.at_budget_end(control)
            return control

        def on_evaluate(self, args: Any, state: Any, control: Any, metrics: Any = None,
                        **kwargs: Any) -> Any:
            # the script's evaluations only: the probe's early one runs with no callbacks
            # (early.quiet)
            eval_metrics.record(getattr(state, "global_step", 0), metrics)
            phases.trainer_evaluated(int(getattr(state, "global_step", 0) or 0))
            return control

    original_init = trainer_cls.__init__
    original_step = trainer_cls.training_step
    original_train = trainer_cls.train

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        try:
            emit("trainer", **trainer_facts(self))  # chance level: measured at the loss
        except Exception as exc:  # noqa: BLE001
            emit("probe_error", where="trainer_facts", message=repr(exc))
        self.add_callback(StopWhenTold())

    def train(self: Any, *args: Any, **kwargs: Any) -> Any:
        if preflight.ENABLED and not State.preflighted:
            State.preflighted = True
            faults = preflight_lm.trainer_checks(self)
            errors = preflight.run_checks(self)
            if errors:  # the run fails as it would have at its first step, all reported
                raise errors[0]
            if faults:  # nothing raises, but no step could learn: end before the first
                raise AutofixStop("preflight")
        if events.MAX_STEPS and not State.evaluated:
            State.evaluated = True
            # compute_metrics on logits, in a Trainer that evaluates while it trains (so
            # the script would raise it): the run fails before its first step
            if not early.evaluate_early(self) and preflight.ENABLED and early.Owed.evaluation:
                error = preflight.confirm_metric_fault(self)
                if error is not None:
                    raise error
        State.in_trainer += 1
        try:
            return original_train(self, *args, **kwargs)
        finally:
            State.in_trainer -= 1

    def training_step(self: Any, *args: Any, **kwargs: Any) -> Any:
        note_model(getattr(self, "model", None))
        loss = original_step(self, *args, **kwargs)
        if State.stop:
            return loss
        try:
            value = float(loss.detach().float().mean().item())
        except Exception:  # noqa: BLE001
            value = None
        lr = None
        optimizer = getattr(self, "optimizer", None)
        if optimizer is not None and getattr(optimizer, "param_groups", None):
            lr = _float(optimizer.param_groups[0].get("lr"))
        record_step(value, lr)
        return loss

    trainer_cls.__init__ = __init__
    trainer_cls.train = train
    trainer_cls.training_step = training_step
    trainer_cls._autofix_patched = True


# --- PyTorch: hand-written loops and per-sample losses ----------------------------------


def patch_tensor(module: types.ModuleType) -> None:
    tensor_cls = module.Tensor
    original_backward = tensor_cls.backward

    def backward(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not State.in_trainer and self.numel() == 1:
            State.pending_loss = float(self.detach().float().item())
            State.backward_calls += 1
        return original_backward(self, *args, **kwargs)

    tensor_cls.backward = backward


def patch_optimizer(module: types.ModuleType) -> None:
    def after_step(optimizer: Any, args: Any, kwargs: Any) -> None:
        if State.in_trainer:
            return
        if State.stop:  # a step after the budget ended the training loop (loops.py)
            raise AutofixStop(State.stop)
        loss, State.pending_loss = State.pending_loss, None
        lr = _float(optimizer.param_groups[0].get("lr")) if optimizer.param_groups else None
        if not State.steps:
            frame = sys._getframe(1)
            if loops.training_iterator() is not None:
                State.total = plan.hand_loop_total(loops.training_iterator(), frame)
            schedules.note_shape(*plan.hand_loop_shape(loops.training_iterator(), frame))
        if record_step(loss, lr) and not loops.end_training_loop():
            raise AutofixStop(State.stop)

    module.register_optimizer_step_post_hook(after_step)
    optimizer_cls = module.Optimizer
    original_zero_grad = optimizer_cls.zero_grad

    def zero_grad(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not State.in_trainer:
            State.zero_grad_calls += 1
        return original_zero_grad(self, *args, **kwargs)

    optimizer_cls.zero_grad = zero_grad


def patch_modeling(module: types.ModuleType) -> None:
    model_cls = module.PreTrainedModel
    original_call = model_cls.__call__

    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        out = original_call(self, *args, **kwargs)
        labels = kwargs.get("labels")
        logits = getattr(out, "logits", None)
        if labels is not None and logits is not None:
            if self.training:
                note_model(self)
                note_predictions(labels, logits)
            num_labels = getattr(getattr(self, "config", None), "num_labels", None)
            State.last_batch = (labels.detach(), logits.detach(), num_labels)
        return out

    model_cls.__call__ = __call__


def patch_module(module: types.ModuleType) -> None:
    """Count ``nn.Module.zero_grad()`` calls outside ``Trainer`` (a hand loop may clear the
    gradients through the model rather than the optimizer; a ``PreTrainedModel`` inherits
    it)."""
    module_cls = module.Module
    original_zero_grad = module_cls.zero_grad

    def zero_grad(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not State.in_trainer:
            State.zero_grad_calls += 1
        return original_zero_grad(self, *args, **kwargs)

    module_cls.zero_grad = zero_grad


# --- Keras ---------------------------------------------------------------------------


def _keras_loss(loss: Any) -> dict[str, Any]:
    """The compiled loss as the ``keras`` event reports it: a string as given, a loss object
    by its class name and ``from_logits``, a function by its ``__name__`` (a Keras loss
    function such as ``sparse_categorical_crossentropy``, or Hugging Face's ``dummy_loss``
    when ``compile`` is given no loss and the model's internal loss is used)."""
    if loss is None or isinstance(loss, str):
        return {"loss": loss, "from_logits": None}
    get_config = getattr(loss, "get_config", None)
    if not callable(get_config):
        return {"loss": getattr(loss, "__name__", type(loss).__name__), "from_logits": None}
    try:
        config: dict[str, Any] = get_config() or {}
    except Exception:  # noqa: BLE001 - the probe must never break the script
        config = {}
    return {"loss": type(loss).__name__, "from_logits": config.get("from_logits")}


def _keras_lr(optimizer: Any) -> float | None:
    lr: Any = getattr(optimizer, "learning_rate", None)
    if callable(lr) and not hasattr(lr, "numpy"):
        lr = lr(getattr(optimizer, "iterations", 0))
    return _float(lr.numpy() if hasattr(lr, "numpy") else lr)


def patch_keras(module: types.ModuleType) -> None:
    model_cls = module.Model
    if getattr(model_cls, "_autofix_patched", False):
        return
    keras_name = module.__name__

    class KerasProbe(module.callbacks.Callback):  # type: ignore[misc,name-defined]
        """Records per-step loss and lr; stops fit at the budget or on a symptom."""

        def on_train_begin(self, logs: Any = None) -> None:
            model = self.model
            config = getattr(model, "config", None)
            num_labels = getattr(config, "num_labels", None)
            emit("keras", keras=keras_name, model_class=type(model).__name__,
                 hf_model=config is not None, num_labels=num_labels,
                 optimizer=type(model.optimizer).__name__, lr=_keras_lr(model.optimizer),
                 **_keras_loss(getattr(model, "loss", None)))
            chance.keras_level(model, num_labels)
            State.total = plan.keras_total(getattr(self, "params", None))

        def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
            self.seen = 0
            self.previous_mean = 0.0

        def on_train_batch_begin(self, batch: int, logs: Any = None) -> None:
            step_probe.keras_before(self.model)

        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            step_probe.keras_after(_keras_lr(self.model.optimizer))
            mean = _float((logs or {}).get("loss"))
            loss = None
            if mean is not None:
                # logs["loss"] is the running mean over the epoch (equal batches assumed)
                self.seen += 1
                loss = mean if self.seen == 1 or not math.isfinite(self.previous_mean) else \
                    self.seen * mean - (self.seen - 1) * self.previous_mean
                self.previous_mean = mean
            if State.stop or record_step(loss, _keras_lr(self.model.optimizer)):
                self.model.stop_training = True

    original_fit = model_cls.fit

    def fit(self: Any, *args: Any, **kwargs: Any) -> Any:
        if preflight.ENABLED:
            preflight.before_fit(self, kwargs.get("x", args[0] if args else None))
        probe = KerasProbe()
        if len(args) > 5:  # fit(x, y, batch_size, epochs, verbose, callbacks, ...)
            args = (*args[:5], [*(args[5] or []), probe], *args[6:])
        else:
            kwargs["callbacks"] = [*(kwargs.get("callbacks") or []), probe]
        return original_fit(self, *args, **kwargs)

    model_cls.fit = fit
    model_cls._autofix_patched = True


# --- datasets --------------------------------------------------------------------------


def patch_datasets(module: types.ModuleType) -> None:
    dataset_cls = module.Dataset
    original = dataset_cls.to_tf_dataset

    def to_tf_dataset(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            facts = dataset_facts("to_tf_dataset", self)
            emit("dataset", requested=repr(kwargs.get("columns", args[0] if args else None)),
                 **facts)
        except Exception as exc:  # noqa: BLE001
            emit("probe_error", where="to_tf_dataset", message=repr(exc))
        if preflight.ENABLED:
            return preflight.to_tf_dataset(self, original, args, kwargs)
        return original(self, *args, **kwargs)

    dataset_cls.to_tf_dataset = to_tf_dataset


def patch_dataloader(module: types.ModuleType) -> None:
    loader_cls = module.DataLoader
    original_init = loader_cls.__init__

    def __init__(self: Any, dataset: Any, *args: Any, **kwargs: Any) -> None:
        if hasattr(dataset, "column_names") and hasattr(dataset, "unique"):
            try:
                facts = dataset_facts("dataloader", dataset)
                if facts.get("label_kind") == "str":  # class names: count the classes
                    facts["label_classes"] = len(dataset.unique(facts["label_column"]))
                emit("dataset", **facts)
            except Exception as exc:  # noqa: BLE001
                emit("probe_error", where="dataloader", message=repr(exc))
        original_init(self, dataset, *args, **kwargs)

    loader_cls.__init__ = __init__


HOOKS = (
    ("transformers.trainer", patch_trainer),
    ("transformers.modeling_utils", patch_modeling),
    ("torch._tensor", patch_tensor),
    ("torch.nn.modules.module", patch_module),
    ("torch.optim.optimizer", step_probe.patch_optimizer),  # before the step recorder
    ("torch.optim.lr_scheduler", step_probe.patch_scheduler),
    ("torch.optim.optimizer", patch_optimizer),
    ("tf_keras", patch_keras),
    ("keras", patch_keras),
    ("datasets.arrow_dataset", patch_datasets),
    ("torch.utils.data.dataloader", patch_dataloader),
    ("datasets.load", sampling.patch_load),
    ("datasets.arrow_dataset", sampling.patch_constructors),
    ("datasets.arrow_dataset", preflight.patch_map),
    ("transformers.modeling_utils", preflight.patch_models),
    ("torch.optim.optimizer", preflight.patch_optimizers),
    ("torch.utils.data.dataloader", preflight.patch_loader),
    ("torch.utils.data.dataloader", loops.patch_iterators),
    ("transformers.tokenization_utils_base", saved.patch_tokenizers),
    ("torch.nn.functional", chance.patch_functional),
    ("transformers.modeling_utils", chance.patch_models),
    ("trl.trainer.dpo_trainer", chance.patch_trainer),
    ("trl.trainer.sft_trainer", preflight.patch_sft),
    ("torch.nn.modules.module", numeric.patch_modules),
    ("torch.nn.modules.module", modes.patch_module),
    ("transformers.trainer", phases.patch_trainer),
    ("transformers.modeling_utils", phases.patch_modeling),
    ("torch.serialization", phases.patch_torch),
    ("tf_keras", phases.patch_keras),
    ("keras", phases.patch_keras),
    ("torch.optim.optimizer", numeric.patch_optimizers),
    *integrity.HOOKS,  # the data and evaluation invariants
)


def _chain(patches: list[Callable[[types.ModuleType], None]]
           ) -> Callable[[types.ModuleType], None]:
    """One patch that applies ``patches`` in order (one failing does not stop the next)."""
    def patch_all(module: types.ModuleType) -> None:
        for patch in patches:
            try:
                recorded(patch, module)
            except Exception as exc:  # noqa: BLE001
                emit("probe_error", where=module.__name__, message=repr(exc))

    return patch_all


def install(select: Callable[[str], bool] | None = None) -> None:
    """Register one post-import hook per module (first in ``sys.meta_path``) applying every
    probe given for it in :data:`HOOKS` (two hooks for one name would find each other);
    ``select(name)``: only the modules it accepts (the warm interpreter's split)."""
    grouped: dict[str, list[Callable[[types.ModuleType], None]]] = {}
    for name, patch in HOOKS:
        if select is None or select(name):
            grouped.setdefault(name, []).append(patch)
    for name, patches in grouped.items():
        sys.meta_path.insert(0, PostImportHook(name, _chain(patches)))
