"""Preflight checks at ``Trainer.train()`` (issue 10): every fault one run can see.

Runs inside the child (standard library only at import; ``torch`` and ``datasets`` are the
child's own, imported when a check runs). Before the first optimizer step it does what the
course's checklist (chapter 8, "Debugging the training pipeline") does by hand, each check
on the real objects and independent of the others:

1. ``collate``: one batch of the training set through the Trainer's own dataloader and
   collator (ragged rows, string labels);
2. ``forward``: that batch through the model and the Trainer's loss, gradients off (raw
   text reaching the model, dtype mismatches);
3. ``collate-tokenized``: when the training set reaching the model is not the one the script
   tokenized, one batch of the tokenized version of the same split (the result of
   ``Dataset.map`` on it) through the same collator: the padding fault that the raw-dataset
   fault hides until it is fixed;
4. ``labels``: the labels of the whole split against the head (``num_labels``), through the
   real loss (``cross_entropy`` on the largest label);
4b. ``metrics``: when another check failed (its fault would end the run before the first
   evaluation), ``evaluate`` on a few eval rows spread over the set, one row per batch
   and string labels class-encoded as their fixes would leave them; a finding only when
   the script's own ``compute_metrics`` raises on the logits and runs on their argmax.
   When every check passes, the early evaluation of the run itself covers this path; when
   that early evaluation fails in a Trainer that evaluates during training, the same check
   decides (:func:`confirm_metric_fault`): a confirmed metric fault ends the run before
   its first step, any other early failure is left to the Trainer's own evaluation
   (``early.py``).

Each failing check emits a ``preflight`` event holding the exception the run would raise
(type, message, frames, chain). The checks never change the Trainer: the dataloader is
rebuilt by training, the model is put back in training mode.

In a hand-written PyTorch loop, the first iteration of a ``DataLoader`` over a
``datasets.Dataset`` (outside ``Trainer``) runs the checks that apply there, before the
first batch reaches the loop:

5. ``loader-collate``: the first rows of the loader's dataset (fetched as the loader fetches
   them, ``__getitems__``) through the loader's own ``collate_fn`` (ragged rows, string
   labels, a raw dataset given to a padding collator);
6. ``loader-labels``: the largest label of the whole split (any class-id encoding of ``k``
   string names reaches ``k - 1``) through the model being trained: a forward of a
   two-token input with that label, gradients off, which raises the loss's own error when
   the head is too small. Run only when the model's logits are ``(1, num_labels)`` (a
   sequence-classification head) and exactly one such model is trained.

A failing ``loader-collate`` is raised from the loader at once (where the loop would have
failed); the other findings are only reported (the loop then hits them or not). The
random states (``torch``, ``random``, ``numpy``) are restored after the checks, so a
collator that draws random numbers leaves the run's randomness unchanged.

Keras scripts fail before ``fit`` (``to_tf_dataset`` raises at module level), so there the
first failure of ``to_tf_dataset`` is recorded with its full traceback and the script goes
on with a placeholder dataset; ``to_tf_dataset`` is tried again on a few rows with the label
dataset's label column renamed as the script asks for it (``label``/``labels``), which shows
the padding fault behind a naming one. At ``Model.fit`` the labels are checked against the
head through TensorFlow's own sparse cross-entropy, and the compiled loss against the
model's outputs (:func:`loss_on_logits`: a cross-entropy that reads probabilities on a model
that returns logits trains, but on the wrong loss); then the run ends with the first
recorded failure (:class:`PreflightFailure`), before any training step, or, when the loss is
the only fault, cleanly (``AutofixStop``) with that ``preflight_fault`` reported.
"""

from __future__ import annotations

import os
import traceback
import weakref
from typing import Any

from . import early, label_contracts, preflight_lm, sampling
from .batches import loader_batch, same_randomness
from .contract import PROBABILITY_LOSSES, Event
from .events import AutofixStop, State, describe_exception, emit

ENABLED = False  # set by the bootstrap from AUTOFIX_PREFLIGHT (contract.Env)
#: Rows of the tokenized split collated by check 3 (a Trainer's default batch size is 8).
SIBLING_ROWS = 8


class PreflightFailure(BaseException):
    """Ends the run with a failure recorded earlier (``description``: its event payload,
    with the traceback it had when it was raised)."""

    def __init__(self, description: dict[str, Any], text: str) -> None:
        super().__init__(description.get("message", ""))
        self.description = description
        self.text = text


class Pending:
    """Failures recorded before ``fit`` (descriptions and printable tracebacks) and the
    label ranges of the datasets given to ``to_tf_dataset``."""

    failures: list[tuple[dict[str, Any], str]] = []
    label_max: dict[str, Any] = {}


class _Mapped:
    """``Dataset.map`` results by the fingerprint of the dataset they were mapped from,
    oldest first. datasets maps internally too (``unique`` on a selected split flattens its
    indices with a ``map`` whose result is dropped at once), so a lookup takes the newest
    result still alive."""

    results: dict[str, list[Any]] = {}


class _Loop:
    """Hand-loop state: models built (weakly), optimizers built (weakly), the loaders
    already checked (by id), whether the labels were checked against the model, and each
    model's ``config.problem_type`` as the script set it, read just before its first
    forward (a forward sets a ``None`` one; the course's loop runs one on an inspected
    batch before training) by a one-shot pre-hook, whose handle waits in ``hooks``."""

    models: list[Any] = []
    declared: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
    hooks: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
    optimizers: list[Any] = []
    loaders: set[int] = set()
    labels_checked = False


def patch_map(module: Any) -> None:
    """Record every ``Dataset.map`` result under its source's fingerprint (weakly)."""
    dataset_cls = getattr(module, "Dataset", None)
    if not ENABLED or dataset_cls is None or getattr(dataset_cls.map, "_autofix", False):
        return
    original = dataset_cls.map

    def map(self: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A001 - the method's name
        result = original(self, *args, **kwargs)
        try:
            source = getattr(self, "_fingerprint", None)
            if source and result is not self:  # every one: datasets' own short-lived maps
                _Mapped.results.setdefault(source, []).append(weakref.ref(result))  # too
        except Exception:  # noqa: BLE001 - the probe must never break the script
            pass
        return result

    map._autofix = True  # type: ignore[attr-defined]
    dataset_cls.map = map


def _record(exc: BaseException, check: str) -> None:
    """Record ``exc`` as caught in the caller, with the frames that led to the call (as
    an uncaught exception would show them), skipping the probe's own frames."""
    here = os.path.dirname(os.path.abspath(__file__))
    outer = [f for f in traceback.extract_stack()[:-2]
             if not os.path.abspath(f.filename).startswith(here)]
    description = describe_exception(exc, check=check)
    description["frames"] = [{"file": f.filename, "line": f.lineno or 0, "function": f.name,
                              "text": f.line or ""} for f in outer] + description["frames"]
    text = "".join(traceback.format_list(outer)) + "".join(
        traceback.format_exception(type(exc), exc, exc.__traceback__))
    Pending.failures.append((description, text))
    emit("preflight", **description)


class _Placeholder:
    """Stands for a dataset ``to_tf_dataset`` failed to make; any use but ``fit`` raises
    the recorded failure."""

    def __getattr__(self, name: str) -> Any:
        description, text = Pending.failures[0]
        raise PreflightFailure(description, text)


def to_tf_dataset(dataset: Any, original: Any, args: tuple[Any, ...],
                  kwargs: dict[str, Any]) -> Any:
    """``dataset.to_tf_dataset(*args, **kwargs)``; when it fails, the failure is recorded,
    the padding check runs on a few rows, and a placeholder is returned."""
    columns = kwargs.get("columns", args[0] if args else None)
    label_cols = kwargs.get("label_cols")
    for name in (label_cols if isinstance(label_cols, list) else [label_cols]) + \
            (columns if isinstance(columns, list) else [columns]):
        if name in ("label", "labels") or (name and name == label_cols):
            try:
                values = [v for v in dataset.unique(_spelled(dataset, name))
                          if isinstance(v, int)]
                if values:
                    Pending.label_max["tf"] = max(values)
            except Exception:  # noqa: BLE001
                pass
    try:
        return original(dataset, *args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - recorded, raised at fit
        _record(exc, "to_tf_dataset")
    if isinstance(columns, list):  # the label column renamed as the script asks for it
        renames = {_spelled(dataset, c): c for c in columns if _spelled(dataset, c) != c}
        if renames:
            rows = dataset.select(range(min(len(dataset), 2 * SIBLING_ROWS)))
            try:  # batches are collated lazily: take one
                _one_batch(original(rows.rename_columns(renames), *args, **kwargs))
            except Exception as exc:  # noqa: BLE001
                _record(exc, "to_tf_dataset-renamed")
    return _Placeholder()


def _spelled(dataset: Any, name: Any) -> Any:
    """``label`` <-> ``labels`` as the dataset names its column (``name`` when present)."""
    names = list(getattr(dataset, "column_names", None) or [])
    if name in names or name not in ("label", "labels"):
        return name
    other = "labels" if name == "label" else "label"
    return other if other in names else name


def _one_batch(dataset: Any) -> None:
    """Collate one batch of a ``tf.data.Dataset`` (``to_tf_dataset`` pads lazily)."""
    if hasattr(dataset, "take"):
        next(iter(dataset.take(1)))


def before_fit(model: Any, dataset: Any) -> None:
    """At ``Model.fit(dataset)``: one batch of ``dataset``, the labels against the head,
    then end the run with the first failure recorded since the script started (nothing
    when none was)."""
    if not isinstance(dataset, _Placeholder):
        try:
            _one_batch(dataset)
        except Exception as exc:  # noqa: BLE001
            _record(exc, "fit-batch")
    config = getattr(model, "config", None)
    num_labels = getattr(config, "num_labels", None)
    high = Pending.label_max.get("tf")
    if isinstance(num_labels, int) and isinstance(high, int) and high >= num_labels:
        try:  # the Keras loss the model compiles with (HF TF models are tf-keras ones)
            import tensorflow as tf

            try:
                from tf_keras import losses
            except ImportError:
                from tensorflow.keras import losses
            losses.sparse_categorical_crossentropy(
                tf.constant([high]), tf.zeros([1, num_labels]), from_logits=True)
        except Exception as exc:  # noqa: BLE001
            _record(exc, "labels")
    fault = loss_on_logits(model)
    if Pending.failures:
        raise PreflightFailure(*Pending.failures[0])
    if fault:  # nothing raises, but every step would train on the wrong loss
        raise AutofixStop("preflight")




def _reads_probabilities(loss: Any) -> str:
    """How the compiled ``loss`` is written when it reads outputs as probabilities
    (``"'sparse_categorical_crossentropy'"``, ``"SparseCategoricalCrossentropy()"``), else
    ""."""
    if isinstance(loss, str):
        return repr(loss) if loss in PROBABILITY_LOSSES else ""
    name = type(loss).__name__
    if name.endswith("Crossentropy") and hasattr(loss, "get_config"):
        try:
            config = loss.get_config() or {}
        except Exception:  # noqa: BLE001
            return ""
        return f"{name}(from_logits=False)" if config.get("from_logits") is False else ""
    function = getattr(loss, "__name__", "")
    return f"losses.{function}" if function in PROBABILITY_LOSSES else ""


def loss_on_logits(model: Any) -> str:
    """At ``Model.fit``: the compiled Keras loss reads the outputs as probabilities, but
    the model returns logits. Checked on the real objects: the loss as compiled
    (``model.loss``) and one forward of the model on its own ``dummy_inputs`` (Hugging Face
    TF models have them), gradients off; the outputs are logits when a value is outside
    [0, 1] or a row does not sum to 1. Emits a ``preflight_fault`` event
    (``keras-string-loss``) and returns its evidence ("" when the loss is right, the model
    has no dummy inputs or the check cannot run)."""
    spelled = _reads_probabilities(getattr(model, "loss", None))
    inputs = getattr(model, "dummy_inputs", None)
    if not spelled or not inputs:
        return ""
    try:
        output = model(inputs, training=False)
        values = getattr(output, "logits", output).numpy()
    except Exception:  # noqa: BLE001 - the check cannot run: no finding
        return ""
    if values.ndim != 2 or values.shape[-1] < 2:
        return ""
    sums = values.sum(axis=-1)
    if values.min() >= 0 and values.max() <= 1 and abs(sums - 1).max() <= 1e-3:
        return ""  # a softmax output: the loss is right
    row = ", ".join(f"{v:.3f}" for v in values[0][:6])
    evidence = (f"compile(loss={spelled}) reads the model's outputs as probabilities "
                f"(from_logits=False), but {type(model).__name__} returns logits: its output "
                f"for a sample input is [{row}] (sum {sums[0]:.3f}), so every step would "
                "train on the wrong loss")
    emit(Event.PREFLIGHT_FAULT, check="keras-loss", category="keras-string-loss",
         evidence=evidence)
    return evidence


def _tokenized_sibling(dataset: Any) -> Any:
    """The last ``Dataset.map`` result derived from ``dataset`` (``None``: not mapped)."""
    found, seen = None, set()
    key = getattr(dataset, "_fingerprint", None)
    while key and key not in seen and key in _Mapped.results:
        seen.add(key)
        result = next((r for r in (ref() for ref in reversed(_Mapped.results[key]))
                       if r is not None), None)
        if result is None:
            break
        found, key = result, getattr(result, "_fingerprint", None)
    return found


def _first_batch(trainer: Any) -> Any:
    return next(iter(trainer.get_train_dataloader()))


def _forward(trainer: Any, batch: Any) -> None:
    """The batch through the Trainer's loss, gradients off, eval mode. A failure is
    confirmed as training would meet it (train mode, gradients on, the random state
    restored) before it is a finding: a ``compute_loss`` that needs a graph (a gradient
    penalty) or behaves otherwise in training fails here for a reason of the check's own,
    and then the run goes on as the script would (issue 23, item 6)."""
    import torch

    model = trainer.model
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            trainer.compute_loss(model, trainer._prepare_inputs(batch))
    except Exception:
        model.train()
        with same_randomness(), torch.enable_grad():
            trainer.compute_loss(model, trainer._prepare_inputs(batch))  # raises: a finding
    finally:
        model.train(was_training)


def _collate_sibling(trainer: Any, sibling: Any) -> None:
    rows = sibling.select(range(min(len(sibling), SIBLING_ROWS)))
    if getattr(trainer.args, "remove_unused_columns", True):
        rows = trainer._remove_unused_columns(rows, description="training")
    trainer.data_collator([rows[i] for i in range(len(rows))])


def _label_column(dataset: Any) -> str:
    """The split's label column as the Trainer's loss reads it (``labels``, else ``label``);
    ``""`` when it has neither."""
    columns = getattr(dataset, "column_names", None) or []
    return next((c for c in ("labels", "label") if c in columns), "")


def _labels_against_head(trainer: Any, dataset: Any) -> None:
    import torch

    config = getattr(trainer.model, "config", None)
    num_labels = getattr(config, "num_labels", None)
    if not isinstance(num_labels, int) or num_labels < 2 or \
            getattr(config, "problem_type", None) not in (None, "single_label_classification"):
        return
    column = _label_column(dataset)
    if not column:
        return
    feature = (getattr(dataset, "features", None) or {}).get(column)
    if type(feature).__name__ in ("Sequence", "List", "LargeList"):
        return  # per-token or target-sequence labels (seq2seq: BART's default num_labels=3)
    values = [v for v in dataset.unique(column) if isinstance(v, int) and v != -100]
    whole = sampling.full_label_max(column)  # the split before --sample-rows cut it
    if isinstance(whole, (int, float)) and float(whole).is_integer():
        values.append(int(whole))
    if values and max(values) >= num_labels:
        torch.nn.functional.cross_entropy(torch.zeros(1, num_labels),
                                          torch.tensor([max(values)]))


#: Evaluation rows sent one at a time through ``evaluate`` by the ``metrics`` check ("a
#: few eval rows", issue 10): 8 forwards, more than one row so that a metric over a batch
#: of predictions (accuracy, F1) sees several, at a cost lost in the run's own noise
#: (ch3_07's run 1, which runs it: 9-12 s over 5 tries, 2026-12-01).
METRIC_ROWS = 8


def spread_rows(total: int, count: int) -> list[int]:
    """``count`` row indices spread evenly over ``range(total)`` (first and last included;
    every row when ``total <= count``). A slice of the first rows of an evaluation set
    sorted by label holds one class, on which a metric such as ROC AUC fails whatever the
    predictions are; rows spread over the set see its classes as the script's own
    evaluation does."""
    if total <= count:
        return list(range(total))
    return sorted({round(i * (total - 1) / (count - 1)) for i in range(count)})


def _argmax_confirms(metrics: Any, prediction: Any, *args: Any, **kwargs: Any) -> bool:
    """Whether ``metrics`` runs on ``prediction`` once its logits are class ids (the
    ``metric-on-logits`` fault: the same call, only the argmax missing)."""
    import numpy
    from transformers.trainer_utils import EvalPrediction

    predictions = prediction.predictions
    logits = predictions[0] if isinstance(predictions, tuple) else predictions
    if getattr(logits, "ndim", 0) < 2:
        return False
    ids = EvalPrediction(predictions=numpy.argmax(logits, axis=-1),
                         label_ids=prediction.label_ids, inputs=prediction.inputs,
                         losses=getattr(prediction, "losses", None))
    try:
        metrics(ids, *args, **kwargs)
    except Exception:  # noqa: BLE001 - it fails for another reason: not this fault
        return False
    return True


def _metrics_on_slice(trainer: Any) -> None:
    """Check 4b as run by :func:`run_checks`: raises :func:`_confirmed_metric_error`'s
    error, when there is one."""
    error = _confirmed_metric_error(trainer)
    if error is not None:
        raise error


def _confirmed_metric_error(trainer: Any) -> BaseException | None:
    """``evaluate`` on a few eval rows spread over the set (:func:`spread_rows`), one row
    per batch, string labels class-encoded; returns the error of a confirmed
    ``metric-on-logits`` fault (raised inside the script's ``compute_metrics``), else None.

    Run when another check failed: that fault would stop the run before the evaluation
    path (``compute_metrics``) is reached, and its fix (padding, ``class_encode_column``)
    is what the one-row batches and the encoding stand in for. A finding only when the
    script's ``compute_metrics`` raises on the model's logits and runs once they are
    argmaxed (so a metric that fails on 8 rows for any other reason is no finding); any
    other failure of this path (a raw eval split, a forward error) is another check's
    finding, or none.
    """
    metrics = trainer.compute_metrics
    dataset = trainer.eval_dataset
    if isinstance(dataset, dict):
        dataset = next(iter(dataset.values()), None)
    if metrics is None or dataset is None or not hasattr(dataset, "select"):
        return None
    rows = dataset.select(spread_rows(len(dataset), METRIC_ROWS))
    column = _label_column(rows)
    try:  # a column of sequences (seq2seq targets) has no unique()
        names = bool(column) and any(isinstance(v, str) for v in rows.unique(column))
    except Exception:  # noqa: BLE001 - not class labels: nothing to encode
        names = False
    if names:
        rows = rows.class_encode_column(column)
    confirmed: list[BaseException] = []

    def confirm(prediction: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return metrics(prediction, *args, **kwargs)
        except Exception as exc:
            if _argmax_confirms(metrics, prediction, *args, **kwargs):
                confirmed.append(exc)
            raise

    args = trainer.args
    size = args.per_device_eval_batch_size
    with same_randomness(), early.quiet(trainer):  # no callback fires (early.py)
        try:
            args.per_device_eval_batch_size, trainer.compute_metrics = 1, confirm
            trainer.evaluate(eval_dataset=rows)
        except Exception as exc:  # noqa: BLE001 - only a confirmed metric fault is a finding
            if confirmed and exc is confirmed[0]:
                return exc
        finally:
            args.per_device_eval_batch_size, trainer.compute_metrics = size, metrics
    return None


def confirm_metric_fault(trainer: Any) -> Exception | None:
    """After the run's early evaluation failed (``early.evaluate_early`` returned False)
    with no other finding: check 4b on ``trainer``. Returns the exception of a confirmed
    ``metric-on-logits`` fault (``compute_metrics`` raises on the logits and runs on their
    argmax), emitted as a ``preflight`` event, for the run to raise before its first step,
    as it would have at its first evaluation; None otherwise (the early failure stays the
    probe's own until the Trainer's evaluation shows it, ``early.py``)."""
    try:
        error = _confirmed_metric_error(trainer)
    except Exception:  # noqa: BLE001 - the check's own failure is no finding
        return None
    if isinstance(error, Exception):
        emit("preflight", **describe_exception(error, check="metrics"))
        return error
    return None


def run_checks(trainer: Any) -> list[Exception]:
    """Every check on ``trainer``; returns the exceptions found, in check order (each also
    emitted as a ``preflight`` event)."""
    findings: list[dict[str, Any]] = []
    errors: list[Exception] = []

    def attempt(check: str, action: Any, *args: Any) -> bool:
        try:
            action(*args)
            return True
        except Exception as exc:  # noqa: BLE001 - each failure is a finding
            findings.append(describe_exception(exc, check=check))
            errors.append(exc)
            return False

    dataset = trainer.train_dataset
    if dataset is None or not hasattr(dataset, "column_names"):
        return errors
    label_contracts.check(trainer)  # faults that raise nothing (before a forward runs)
    batch: list[Any] = []
    if attempt("collate", lambda: batch.append(_first_batch(trainer))):
        attempt("forward", _forward, trainer, batch[0])
    sibling = _tokenized_sibling(dataset)
    if findings and sibling is not None and sibling is not dataset:
        attempt("collate-tokenized", _collate_sibling, trainer, sibling)
    attempt("labels", _labels_against_head, trainer, dataset)
    if findings:
        attempt("metrics", _metrics_on_slice, trainer)
    for finding in findings:
        emit("preflight", **finding)
    return errors


def patch_sft(module: Any) -> None:
    """When the preflight is on, record what TRL's ``SFTTrainer`` prepares from each split
    (``module``: ``trl.trainer.sft_trainer``; :func:`preflight_lm.patch_sft`)."""
    if ENABLED:
        preflight_lm.patch_sft(module)


# --- hand-written PyTorch loops ----------------------------------------------------------


def patch_models(module: Any) -> None:
    """Record every ``PreTrainedModel`` built (``post_init`` ends every model's
    ``__init__``), weakly: the candidates for the model a hand loop trains."""
    model_cls = getattr(module, "PreTrainedModel", None)
    if not ENABLED or model_cls is None or getattr(model_cls.post_init, "_autofix", False):
        return
    original = model_cls.post_init

    def post_init(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        try:
            _Loop.models.append(weakref.ref(self))
            _Loop.hooks[self] = self.register_forward_pre_hook(_before_first_forward)
        except (TypeError, AttributeError):  # not weak-referenceable: not a model to check
            pass
        return result

    post_init._autofix = True  # type: ignore[attr-defined]
    model_cls.post_init = post_init


def patch_optimizers(module: Any) -> None:
    """Record every ``torch.optim.Optimizer`` built (weakly): its parameters say which
    model a hand loop trains."""
    optimizer_cls = getattr(module, "Optimizer", None)
    if not ENABLED or optimizer_cls is None or getattr(optimizer_cls.__init__, "_autofix",
                                                       False):
        return
    original = optimizer_cls.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        try:
            _Loop.optimizers.append(weakref.ref(self))
        except TypeError:
            pass

    __init__._autofix = True  # type: ignore[attr-defined]
    optimizer_cls.__init__ = __init__


def patch_loader(module: Any) -> None:
    """Check at the first iteration of each ``DataLoader`` over a ``datasets.Dataset``
    outside ``Trainer`` (:func:`loop_checks`)."""
    loader_cls = getattr(module, "DataLoader", None)
    if not ENABLED or loader_cls is None or getattr(loader_cls.__iter__, "_autofix", False):
        return
    original = loader_cls.__iter__

    def __iter__(self: Any) -> Any:
        first = id(self) not in _Loop.loaders
        if not State.in_trainer and not State.preflighted and (
                first or not _Loop.labels_checked):
            _Loop.loaders.add(id(self))
            error = loop_checks(self, collate=first)
            if error is not None:  # the loop fails where it would have: its first batch
                raise error
            if not preflight_lm.Seen.checked_loop and preflight_lm.loop_checks(
                    self, _trained_model()):  # a language model's fault: no step learns
                raise AutofixStop("preflight")
        return original(self)

    __iter__._autofix = True  # type: ignore[attr-defined]
    loader_cls.__iter__ = __iter__


def _before_first_forward(model: Any, args: Any) -> None:
    """A model's one-shot forward pre-hook: its ``problem_type`` as the script left it
    before the forward that resolves a ``None`` one (set after building counts)."""
    try:
        _Loop.declared[model] = getattr(getattr(model, "config", None), "problem_type", None)
        _Loop.hooks.pop(model).remove()
    except Exception:  # noqa: BLE001 - the probe must never break the script
        pass


def _declared_problem(model: Any) -> Any:
    """The ``problem_type`` the script gave ``model``: the value just before its first
    forward, "" (read its config as it is now) when it has run none."""
    try:
        return _Loop.declared.get(model, "")
    except TypeError:  # an unhashable model: its config's own value is read
        return ""


def _trained_model() -> Any:
    """The one Hugging Face model a hand loop trains (the recorded models an optimizer
    holds the parameters of, or all of them when no optimizer was built), not counting
    models inside another; ``None`` when there is none or more than one."""
    models = [m for m in (ref() for ref in _Loop.models) if m is not None]
    models = [m for m in models if not any(o is not m and any(sub is m for sub in o.modules())
                                           for o in models)]
    held = set()
    for optimizer in (ref() for ref in _Loop.optimizers):
        if optimizer is not None:
            held |= {id(p) for group in optimizer.param_groups for p in group["params"]}
    if held:
        models = [m for m in models if any(id(p) in held for p in m.parameters())]
    return models[0] if len(models) == 1 else None


def _largest_label(dataset: Any) -> int | None:
    """The largest class id the split's label column holds or (strings) will hold once
    encoded: ``k`` distinct names give ids up to ``k - 1``. Whole split: a split cut by
    ``--sample-rows`` adds its uncut maximum. ``None``: no label column of class ids."""
    column = _label_column(dataset)
    if not column:
        return None
    feature = (getattr(dataset, "features", None) or {}).get(column)
    if type(feature).__name__ in ("Sequence", "List", "LargeList"):
        return None  # per-token or target-sequence labels: Dataset.unique has no kernel
    values = [v for v in dataset.unique(column) if v is not None]
    if values and all(isinstance(v, str) for v in values):
        return len(values) - 1
    ints = [v for v in values if isinstance(v, int) and not isinstance(v, bool) and v != -100]
    if not ints or len(ints) != len([v for v in values if v != -100]):
        return None
    for name in (column, "labels" if column == "label" else "label"):
        whole = sampling.full_label_max(name)
        if isinstance(whole, (int, float)) and float(whole).is_integer():
            ints.append(int(whole))
            break
    return max(ints)


def _labels_through_model(model: Any, dataset: Any) -> None:
    """Forward a two-token input with the split's largest label through ``model``
    (gradients off, eval mode, then back): raises what the loss raises for that label."""
    import torch

    config = getattr(model, "config", None)
    num_labels = getattr(config, "num_labels", None)
    high = _largest_label(dataset)
    if not isinstance(num_labels, int) or high is None or high < num_labels or \
            getattr(model, "main_input_name", "") != "input_ids":
        return
    device = next(model.parameters()).device
    ids = torch.zeros((1, 2), dtype=torch.long, device=device)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            logits = getattr(model(input_ids=ids), "logits", None)
            if logits is None or tuple(logits.shape) != (1, num_labels):
                return  # not a sequence-classification head: no claim about its labels
            model(input_ids=ids, labels=torch.tensor([high], device=device))
    finally:
        model.train(was_training)


def loop_checks(loader: Any, collate: bool = True) -> Exception | None:
    """Checks 5 (when ``collate``: the loader's first iteration) and 6 (once per run, as
    soon as the trained model exists: a loop may look at a batch before building it) on
    ``loader`` (module docstring); each failure is emitted as a ``preflight`` event.
    Returns the collate failure (the one the loop hits first), else ``None``."""
    dataset = getattr(loader, "dataset", None)
    if dataset is None or not hasattr(dataset, "column_names") or \
            not hasattr(dataset, "unique"):
        return None
    errors: dict[str, Exception] = {}
    with same_randomness():
        try:
            if collate:
                loader_batch(loader)
        except Exception as exc:  # noqa: BLE001 - a finding
            errors["loader-collate"] = exc
        model = None if _Loop.labels_checked else _trained_model()
        if model is not None:
            _Loop.labels_checked = True
            label_contracts.check_loop(model, dataset, _declared_problem(model))
            try:
                _labels_through_model(model, dataset)
            except Exception as exc:  # noqa: BLE001 - a finding
                errors["loader-labels"] = exc
    for check, error in errors.items():
        emit("preflight", **describe_exception(error, check=check))
    return errors.get("loader-collate")
