"""Where in the stack an error was raised: the library boundary a frame belongs to.

The same message means different faults at different sites: "Unable to create tensor"
from a collator is an unpadded batch, from the function given to ``Dataset.map`` a
tokenizer asked for tensors (measured on transformers 5.24 and 4.57.6). A frame is
matched as the string ``"file:function: text"`` (file with ``/`` separators, see
:func:`frame_keys`).
"""

from __future__ import annotations

import re

from autofix.categories.tracebacks import message_frames
from autofix.types import ExceptionInfo, Frame

#: Where an error can be raised: site name -> regex searched in ``"file:function: text"``
#: of a frame. :func:`raised_site` takes the innermost frame that matches one of them, in
#: this order within a frame.
SITES: tuple[tuple[str, str], ...] = (
    ("collator", r"transformers/data/data_collator\.py:|torch/utils/data/_utils/collate\.py:"
                 r"|datasets/utils/tf_utils\.py:|:\w*collat\w*: |:to_tf_dataset: "),
    ("map-function", r"datasets/arrow_dataset\.py:(apply_function\w*|_map_single|map): "
                     r"|datasets/dataset_dict\.py:map: "),
    ("embedding", r"torch/nn/functional\.py:embedding: "),
    ("loss", r"torch/nn/functional\.py:(cross_entropy|nll_loss|mse_loss|l1_loss|smooth_l1_loss"
             r"|binary_cross_entropy\w*): |torch/nn/modules/loss\.py:|transformers/loss/"
             r"|(tf_keras|keras)/src/(losses|backend)\.py:|keras/src/losses/"),
    ("compute-metrics", r"transformers/trainer\w*\.py:\w+: .*compute_metrics\("),
    ("model-forward", r"transformers/models/.*:(forward|call): |transformers/modeling_\w+\.py:"),
    ("optimizer", r"(tf_keras|keras)/src/optimizers/|keras/src/optimizers/"),
    ("training-arguments", r"transformers/training_args\w*\.py:"),
    ("trainer", r"transformers/trainer\w*\.py:"),
)
_SITES = tuple((name, re.compile(pattern)) for name, pattern in SITES)


def frame_keys(frames: tuple[Frame, ...]) -> tuple[str, ...]:
    """``"file:function: text"`` of each frame, file with ``/`` separators (what
    :data:`SITES` and ``frame_patterns`` are matched against)."""
    return tuple(f"{f.file.replace(chr(92), '/')}:{f.function}: {f.text}" for f in frames)


def all_frames(exc: ExceptionInfo) -> tuple[Frame, ...]:
    """The frames of ``exc``, outermost first, then those inside its message (a TensorFlow
    graph error raised by an op runs deeper than the Python frame that executed it)."""
    return (*exc.frames, *message_frames(exc.message))


def raised_site(exc: ExceptionInfo) -> str:
    """The site (:data:`SITES`) of the innermost frame of ``exc`` that matches one, else
    of the exceptions it was chained from (a cause raised deep inside a tokenizer takes
    the site of the exception that wraps it); "" when no frame matches."""
    for candidate in (exc, *exc.chain):
        for key in reversed(frame_keys(all_frames(candidate))):
            for name, pattern in _SITES:
                if pattern.search(key):
                    return name
    return ""
