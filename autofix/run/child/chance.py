"""The task's chance level, measured at the training loss (standard library at import).

The stall rule compares the loss with the loss of a model that has learned nothing of the
task (:class:`symptoms.Chance`). That level depends on what the loss is computed on, not on
the model's config (a GPT-2 or Llama config says ``num_labels=2`` whatever it is trained
for), so it is taken where the training loss is computed, in two places:

* a training forward of a Hugging Face model given ``labels`` (gradients on, the model in
  training mode: evaluation and the preflight forwards are left out;
  :func:`note_model_loss`): when its logits are as wide as its vocabulary (the output
  embeddings' width, else ``config.vocab_size``), or it is a language-model class whose
  output has no logits (TRL's fused LM head returns log-probabilities only), the task is
  language modelling and the level is the unigram entropy H of the scored tokens (the
  labels that are not -100, shifted by one for a causal LM as its loss does), counted over
  the training batches seen (up to :data:`TOKEN_LIMIT` tokens); integer labels with logits
  of another width C are a classifier's: ln C; float labels (a regression, a multi-label
  BCE) have no chance level;
* ``torch.nn.functional.cross_entropy`` / ``nll_loss`` with an input that requires grad,
  outside such a forward (a hand loop computing its own loss; :func:`note_loss`): the
  logits' width C at the loss, a language model when C is the vocabulary of the model last
  called (its targets counted), else ln C.

A run with neither (an MSE loss) has no chance level; a preference trainer (TRL's
``DPOTrainer`` with its default sigmoid loss) starts at exactly ln 2 (policy = reference),
its level. Measured on the tiny Llama (``scripts/make_tiny_llm.py``): completion-only SFT
scores 516 answer tokens per epoch, H = 3.023 nats (ln V = 6.844); text rows H = 3.406.
Counting costs one ``bincount`` of the batch's labels per training forward.
"""

from __future__ import annotations

import types
from typing import Any

from .events import State, set_chance, set_num_classes
from .symptoms import Chance

#: Scored tokens counted for the entropy (a bound on the cost); after that the estimate is
#: kept as it is.
TOKEN_LIMIT = 200_000


#: Hugging Face model classes (by name ending) whose loss is over the vocabulary, and
#: those of them whose loss shifts the labels by one (causal).
LM_CLASSES = ("ForCausalLM", "LMHeadModel", "ForMaskedLM", "ForConditionalGeneration",
              "ForPreTraining")
CAUSAL_CLASSES = ("ForCausalLM", "LMHeadModel")


class Task:
    """What the training loss showed so far (reset per process)."""

    kind = ""  # "", "classes", "tokens"
    width = 0  # the logits' width at the loss
    width_step = -1  # the optimizer step at which a hand loss of that width was last seen
    mixed = False  # losses of several widths in one step (multi-task heads): level kept
    counts: Any = None  # torch tensor of token counts (tokens kind)
    tokens = 0
    #: (model, given labels) of the Hugging Face model calls running, innermost last
    active: list[tuple[Any, bool]] = []
    last_model: Any = None


def vocab_of(model: Any) -> int | None:
    """The vocabulary of a Hugging Face model: its output embeddings' width, else
    ``config.vocab_size`` (``None`` for a model without either)."""
    if model is None:
        return None
    try:
        out = model.get_output_embeddings()
        width = getattr(out, "out_features", None) or getattr(out, "num_embeddings", None)
        if isinstance(width, int):
            return width
    except Exception:  # noqa: BLE001 - not every model has output embeddings
        pass
    vocab = getattr(getattr(model, "config", None), "vocab_size", None)
    return vocab if isinstance(vocab, int) else None


def _classes(width: int) -> None:
    Task.kind, Task.width = "classes", width
    set_chance(Chance.of_classes(width))


def _count(ids: Any, width: int, ignore_index: int = -100) -> None:
    """Add the scored token ids ``ids`` (any shape; ``ignore_index`` and ids outside
    ``[0, width)`` left out) to the counts and update the entropy."""
    if Task.tokens >= TOKEN_LIMIT or ids.is_floating_point():
        return
    import torch

    flat = ids.detach().reshape(-1)
    flat = flat[(flat != ignore_index) & (flat >= 0) & (flat < width)]
    if flat.numel() == 0:
        return
    counts = torch.bincount(flat.to("cpu", torch.long), minlength=width)
    Task.counts = counts if Task.counts is None or Task.counts.numel() != width \
        else Task.counts + counts
    Task.tokens += int(flat.numel())
    nonzero = Task.counts[Task.counts > 0].double()
    if nonzero.numel() < 2:
        return
    p = nonzero / nonzero.sum()
    set_chance(Chance(float(-(p * p.log()).sum()), "tokens", "H", None, Task.tokens))


def is_language_model(model: Any) -> bool:
    """A Hugging Face model whose loss is over its vocabulary (by its class name)."""
    return type(model).__name__.endswith(LM_CLASSES)


def note_model_loss(model: Any, labels: Any, out: Any) -> None:
    """One training forward of a Hugging Face model given ``labels``: a language model
    (its logits as wide as its vocabulary, or an LM class whose output has no logits, as
    TRL's fused LM head) counts its scored labels (shifted by one for a causal LM, as its
    loss does); a classifier (integer labels) is ln C of its logits' width; float labels
    (a regression, multi-label BCE) have no chance level."""
    if State.stop or Task.kind == "pairs":
        return
    import torch

    if not torch.is_grad_enabled() or not getattr(model, "training", False):
        return
    logits = getattr(out, "logits", None)
    vocab = vocab_of(model)
    width = int(logits.shape[-1]) if logits is not None and logits.dim() >= 2 else 0
    language = vocab is not None and (width == vocab or (not width and is_language_model(model)))
    if language and vocab is not None:
        Task.kind, Task.width = "tokens", vocab
        causal = type(model).__name__.endswith(CAUSAL_CLASSES)
        _count(labels[..., 1:] if causal and labels.dim() >= 2 else labels, vocab)
    elif width >= 2 and not labels.is_floating_point() and Task.kind in ("", "classes"):
        if Task.kind != "classes" or Task.width != width:
            _classes(width)


def note_loss(logits: Any, target: Any, ignore_index: int = -100) -> None:
    """One training cross-entropy outside a Hugging Face model given labels (a hand loop
    computing its own loss): ``logits`` ``[N, C]`` or ``[N, C, d...]``, ``target`` class
    ids ``[N]`` / ``[N, d...]`` (or probabilities, as wide as the logits). A width equal
    to the vocabulary of the model last called is a language model (its targets counted);
    any other width C is a classifier, ln C."""
    if State.stop or logits is None or not getattr(logits, "requires_grad", False):
        return
    if any(labelled for _, labelled in Task.active):
        return  # the model's own loss: note_model_loss sees its labels
    width = int(logits.shape[1] if logits.dim() >= 2 else logits.shape[0])
    if width < 2 or Task.kind == "pairs":
        return
    if not Task.kind:
        if vocab_of(Task.last_model) == width:
            Task.kind, Task.width = "tokens", width
        else:
            _classes(width)
            Task.width_step = State.steps
            return
    if Task.kind == "classes" and width != Task.width and not Task.mixed:
        # two widths within one optimizer step: several heads summed (multi-task), the
        # first kept; a new width at a later step: a new head (a second training phase)
        if Task.width_step == State.steps:
            Task.mixed = True
        else:
            _classes(width)
    if Task.kind == "classes":
        Task.width_step = State.steps
    if Task.kind == "tokens" and width == Task.width:
        _count(target, width, ignore_index)


def patch_functional(module: types.ModuleType) -> None:
    """Wrap ``torch.nn.functional.cross_entropy`` and ``nll_loss`` (looked up at call time
    by ``nn.CrossEntropyLoss`` and transformers' loss functions)."""
    for name in ("cross_entropy", "nll_loss"):
        original = getattr(module, name, None)
        if original is None or getattr(original, "_autofix_chance", False):
            continue
        setattr(module, name, _wrapped(original))


def _wrapped(original: Any) -> Any:
    def loss(input: Any, target: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A002
        out = original(input, target, *args, **kwargs)
        try:
            ignore = kwargs.get("ignore_index", args[2] if len(args) > 2 else -100)
            note_loss(input, target, int(ignore))
        except Exception:  # noqa: BLE001 - the probe must never break the script
            pass
        return out

    loss._autofix_chance = True  # type: ignore[attr-defined]
    loss.__wrapped__ = original  # type: ignore[attr-defined]
    loss.__name__ = getattr(original, "__name__", "loss")
    loss.__doc__ = getattr(original, "__doc__", None)
    return loss


def patch_models(module: types.ModuleType) -> None:
    """Keep track of the Hugging Face model being called (its vocabulary tells a language
    model's loss from a classifier's) and read the labels it is given."""
    model_cls = module.PreTrainedModel
    original_call = model_cls.__call__

    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        labels = kwargs.get("labels")
        Task.active.append((self, labels is not None))
        try:
            out = original_call(self, *args, **kwargs)
        finally:
            Task.active.pop()
            Task.last_model = self
        if labels is not None and not Task.active:
            try:
                note_model_loss(self, labels, out)
            except Exception:  # noqa: BLE001 - the probe must never break the script
                pass
        return out

    model_cls.__call__ = __call__


def patch_trainer(module: types.ModuleType) -> None:
    """A TRL ``DPOTrainer`` with the sigmoid loss (its default) judges against ln 2: its
    loss is -log sigmoid(beta x margin), exactly ln 2 while the policy equals the
    reference (measured: 0.693 at step 1 on the tiny Llama)."""
    trainer_cls = getattr(module, "DPOTrainer", None)
    if trainer_cls is None or getattr(trainer_cls, "_autofix_chance", False):
        return
    original_init = trainer_cls.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        loss_type = getattr(getattr(self, "args", None), "loss_type", "sigmoid")
        if loss_type in ("sigmoid", ["sigmoid"], ("sigmoid",)):
            Task.kind = "pairs"
            set_chance(Chance.pairs())

    trainer_cls.__init__ = __init__
    trainer_cls._autofix_chance = True




def keras_level(model: Any, num_labels: Any) -> None:
    """The chance level of a Keras ``fit`` (no loss call is seen there): a Hugging Face
    language model's ln V (its config's ``vocab_size``), a classifier's ln ``num_labels``."""
    name = type(model).__name__
    if name.endswith(LM_CLASSES):
        vocab = getattr(getattr(model, "config", None), "vocab_size", None)
        if isinstance(vocab, int) and vocab > 1 and State.monitor.level is None:
            set_chance(Chance.of_vocab(vocab))
        return
    set_num_classes(num_labels)
