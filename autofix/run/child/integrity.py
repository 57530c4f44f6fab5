"""The probes of the data and evaluation invariants, as ``(module, patch)`` pairs that
:data:`probes.HOOKS` applies right after each module is imported: the loss's input
(:mod:`loss_inputs`), the metric's inputs (:mod:`metric_inputs`), the label mappings of
each split (:mod:`label_maps`), the rows shared by training and evaluation data
(:mod:`split_rows`) and a language model's label mask (:mod:`label_masks`). Standard
library only.
"""

from __future__ import annotations

import types
from collections.abc import Callable

from . import label_maps, label_masks, loss_inputs, metric_inputs, split_rows

HOOKS: tuple[tuple[str, Callable[[types.ModuleType], None]], ...] = (
    ("torch.nn.functional", loss_inputs.patch_functional),
    ("torch.nn.functional", loss_inputs.patch_functional_layers),
    ("torch", loss_inputs.patch_layers),
    ("torch", metric_inputs.patch_torch),
    ("numpy", metric_inputs.patch_numpy),
    ("transformers.trainer", metric_inputs.patch_trainer),
    ("sklearn.preprocessing._label", label_maps.patch_label_encoder),
    ("pandas.core.algorithms", label_maps.patch_factorize),
    ("pandas.core.series", label_maps.patch_series),
    ("datasets.arrow_dataset", label_maps.patch_datasets),
    ("torch.optim.optimizer", label_maps.patch_optimizer),
    ("transformers.trainer", label_maps.patch_trainer),
    ("transformers.trainer", split_rows.patch_trainer),
    ("torch.utils.data.dataloader", split_rows.patch_loader),
    ("torch.optim.optimizer", split_rows.patch_optimizer),
    ("sklearn.preprocessing._data", split_rows.patch_scalers),
    ("transformers.modeling_utils", label_masks.patch_models),
)
