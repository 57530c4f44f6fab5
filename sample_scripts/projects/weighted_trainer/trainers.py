"""The project's own Trainer and callback, written against transformers 4.3x: a class-weighted
loss (``compute_loss`` without the ``num_items_in_batch`` that Trainer.training_step passes
since 4.46) and a logging callback whose ``on_log`` takes no ``**kwargs`` (transformers'
CallbackHandler passes ``model=``, ``optimizer=``... to every event)."""
import torch
from transformers import Trainer, TrainerCallback


class WeightedTrainer(Trainer):
    """Cross-entropy weighted by ``class_weights`` (a float tensor, one weight per class)."""

    def __init__(self, *args, class_weights=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.class_weights = class_weights

    def compute_loss(self, model, inputs, return_outputs=False):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        weight = self.class_weights.to(outputs.logits.device)
        loss = torch.nn.functional.cross_entropy(outputs.logits, labels, weight=weight)
        return (loss, outputs) if return_outputs else loss


class LossPrinter(TrainerCallback):
    """Prints each logged loss."""

    def on_log(self, args, state, control, logs=None):
        if logs and "loss" in logs:
            print(f"step {state.global_step}: loss {logs['loss']:.3f}")
