"""The input contracts of torch's layers, read on the arguments their ``forward`` (or its
functional form) holds: a linear, convolutional or recurrent layer takes inputs of its
weights' dtype and of its own input size; an embedding takes integer indices; batch norm
in training needs more than one value per channel.

torch 2.13's rules (measured): ``F.linear`` on a float64 input and float32 weights raises
``mat1 and mat2 must have the same dtype``; a convolution ``Input type (double) and bias
type (float) should be the same``; ``F.embedding`` on float indices ``Expected tensor for
argument #1 'indices' to have one of the following scalar types: Long, Int``;
``F.batch_norm`` in training on a batch of one row ``Expected more than 1 value per
channel when training``.
"""

from __future__ import annotations

from typing import Any

from .model import Breach, Call, Confirmed, Contract, Example, dtype_text, shape_text

_FLOAT_CAST = {"torch.float32": ("cast-float32", ".float()"),
               "torch.float64": ("cast-float64", ".double()"),
               "torch.float16": ("cast-float16", ".half()"),
               "torch.bfloat16": ("cast-bfloat16", ".bfloat16()")}


def _weighted_input(call: Call) -> tuple[Any, Any, Any] | None:
    """(input, weight, bias) of a layer's forward frame: ``self``'s ``weight`` (a linear or
    recurrent layer) or the frame's ``weight`` (a convolution's ``_conv_forward``)."""
    layer, given = call.get("self"), call.get("input")
    weight = call.get("weight")
    if not call.is_tensor(weight):
        weight = getattr(layer, "weight", None)
        if not call.is_tensor(weight):
            weight = next((p for n, p in getattr(layer, "named_parameters", lambda: [])()
                           if n.startswith("weight")), None)
    bias = call.get("bias") if "bias" in call.locals else getattr(layer, "bias", None)
    if not (call.is_tensor(given) and call.is_tensor(weight)):
        return None
    return given, weight, bias


def _input_dtype(call: Call) -> Breach | None:
    found = _weighted_input(call)
    if found is None:
        return None
    given, weight, _ = found
    if given.dtype == weight.dtype or not weight.is_floating_point() \
            or given.is_complex() or str(given.dtype) == "torch.bool":
        return None
    layer = type(call.get("self")).__name__
    return Breach("dtype", f"{dtype_text(given)} inputs",
                  f"{dtype_text(weight)}, the dtype of the {layer}'s weights", given,
                  {"dtype": dtype_text(given), "weights": dtype_text(weight), "layer": layer})


def _input_dtype_trial(call: Call, breach: Breach) -> Confirmed | None:
    found = _weighted_input(call)
    layer = call.get("self")
    if found is None or layer is None or call.torch is None:
        return None
    given, weight, _ = found
    operator, method = _FLOAT_CAST.get(str(weight.dtype), ("", ""))
    if not operator:
        return None
    if call.passes(lambda: layer(given.to(weight.dtype))):
        return Confirmed(operator, f"input{method}")
    return None


def _input_device(call: Call) -> Breach | None:
    """Inputs on another device than the layer's weights (the batch left on the CPU while
    the model is on the GPU)."""
    found = _weighted_input(call)
    if found is None:
        found = (call.get("input"), call.get("weight"), None)  # F.embedding's frame
        if not (call.is_tensor(found[0]) and call.is_tensor(found[1])):
            return None
    given, weight, _ = found
    if given.device == weight.device:
        return None
    return Breach("device", f"inputs on {given.device}",
                  f"{weight.device}, the device of the weights", given,
                  {"device": str(given.device), "weights": str(weight.device)})


def _input_device_trial(call: Call, breach: Breach) -> Confirmed | None:
    layer, given, weight = call.get("self"), call.get("input"), call.get("weight")
    torch = call.torch
    if torch is None or not call.is_tensor(given):
        return None
    if layer is not None and hasattr(layer, "forward"):
        device = next(layer.parameters()).device

        def again() -> Any:
            return layer(given.to(device))
    elif call.is_tensor(weight):
        device = weight.device

        def again() -> Any:
            return torch.nn.functional.embedding(given.to(device), weight)
    else:
        return None
    if call.passes(again):
        return Confirmed("move-to-device", f"input.to({str(device)!r})")
    return None


def _input_size(call: Call) -> Breach | None:
    layer, given = call.get("self"), call.get("input")
    size = getattr(layer, "in_features", None)
    if not call.is_tensor(given) or not isinstance(size, int) or given.dim() == 0:
        return None
    if int(given.shape[-1]) == size:
        return None
    return Breach("size", f"inputs of {int(given.shape[-1])} features (shape "
                          f"{shape_text(given)})",
                  f"{size} features, the layer's in_features", given,
                  {"in_features": size, "features": int(given.shape[-1])})


def _index_dtype(call: Call) -> Breach | None:
    ids, weight = call.get("input"), call.get("weight")
    if not (call.is_tensor(ids) and call.is_tensor(weight)):
        return None
    if str(ids.dtype) in ("torch.int64", "torch.int32"):
        return None
    return Breach("dtype", f"indices as {dtype_text(ids)}", "int64 indices (torch.long)", ids,
                  {"dtype": dtype_text(ids), "rows": int(weight.shape[0])})


def _index_dtype_trial(call: Call, breach: Breach) -> Confirmed | None:
    ids, weight = call.get("input"), call.get("weight")
    if call.torch is None or not call.is_tensor(ids):
        return None
    fn = call.torch.nn.functional.embedding
    if call.passes(lambda: fn(ids.long(), weight)):
        return Confirmed("cast-int64", "input.long()")
    return None


def _index_range(call: Call) -> Breach | None:
    ids, weight = call.get("input"), call.get("weight")
    if not (call.is_tensor(ids) and call.is_tensor(weight)) or ids.is_floating_point() \
            or not ids.numel():
        return None
    rows = int(weight.shape[0])
    low, high = int(ids.min()), int(ids.max())
    if 0 <= low and high < rows:
        return None
    return Breach("range", f"indices from {low} to {high}",
                  f"indices in [0, {rows}), the embedding's rows", ids,
                  {"rows": rows, "min": low, "max": high, **_embedding_name(call, weight)})


def _embedding_name(call: Call, weight: Any) -> dict[str, str]:
    """The name of the embedding whose weight ``weight`` is, in the model a frame above
    holds (``token_type_embeddings``): ``{"embedding": name}``, ``{}`` when not found."""
    import sys

    frame = sys._getframe()
    for _ in range(40):
        frame = frame.f_back  # type: ignore[assignment]
        if frame is None:
            return {}
        for value in list(frame.f_locals.values())[:60]:
            named = getattr(value, "named_modules", None)
            if named is None or isinstance(value, type):
                continue
            try:
                for path, module in named():
                    if getattr(module, "weight", None) is weight and path:
                        return {"embedding": path}
            except Exception:  # noqa: BLE001
                continue
    return {}


def _conv_layout(call: Call) -> Breach | None:
    """A convolution's input whose channel axis is not axis 1: images kept channels-last
    (``(N, H, W, C)``), or a batch without its channel axis (``(N, H, W)``)."""
    layer, given, weight = call.get("self"), call.get("input"), call.get("weight")
    channels = getattr(layer, "in_channels", None)
    if not (call.is_tensor(given) and call.is_tensor(weight)) or not isinstance(channels, int):
        return None
    groups = int(getattr(layer, "groups", 1) or 1)
    batched = weight.dim()  # (N, C, *spatial) has as many axes as the weight
    if given.dim() == batched and int(given.shape[1]) == channels:
        return None
    if given.dim() == batched - 1 and int(given.shape[0]) == channels:
        return None  # an unbatched input, channels first: allowed
    return Breach("layout", f"inputs of shape {shape_text(given)}",
                  f"(batch, {channels} channels, ...): channels on axis 1 "
                  f"({type(layer).__name__}(in_channels={channels}, groups={groups}))",
                  given, {"shape": list(given.shape), "in_channels": channels})


def _conv_layout_trial(call: Call, breach: Breach) -> Confirmed | None:
    layer, given, weight = call.get("self"), call.get("input"), call.get("weight")
    channels = getattr(layer, "in_channels", None)
    if layer is None or not call.is_tensor(given) or not call.is_tensor(weight):
        return None
    batched = weight.dim()
    if given.dim() == batched and int(given.shape[-1]) == channels:
        order = (0, batched - 1, *range(1, batched - 1))
        if call.passes(lambda: layer(given.permute(*order))):
            return Confirmed("channels-first", f"input.permute{order}")
    if given.dim() == batched - 1 and channels == 1 \
            and call.passes(lambda: layer(given.unsqueeze(1))):
        return Confirmed("add-channel-axis", "input.unsqueeze(1)")
    return None


def _norm_shape(call: Call) -> Breach | None:
    given, shape = call.get("input"), call.get("normalized_shape")
    if not call.is_tensor(given) or not isinstance(shape, (list, tuple)) or not shape:
        return None
    wanted = tuple(int(d) for d in shape)
    if tuple(int(d) for d in given.shape[-len(wanted):]) == wanted:
        return None
    return Breach("size", f"inputs of shape {shape_text(given)}",
                  f"a last axis of {wanted[-1]} (the norm's normalized_shape {list(wanted)})",
                  given, {"normalized_shape": list(wanted), "features": int(given.shape[-1])})


def _norm_rows(call: Call) -> Breach | None:
    given = call.get("input")
    if not call.is_tensor(given) or not call.get("training") or given.dim() < 2:
        return None
    values = int(given.shape[0])
    for d in given.shape[2:]:
        values *= int(d)
    if values > 1:
        return None
    return Breach("rows", f"a batch of {int(given.shape[0])} row (shape {shape_text(given)})",
                  "more than one value per channel in training: a batch of 2 rows or more",
                  given, {"rows": int(given.shape[0])})


def _norm_rows_trial(call: Call, breach: Breach) -> Confirmed | None:
    given = call.get("input")
    torch = call.torch
    if torch is None or not call.is_tensor(given):
        return None
    mean, var = call.get("running_mean"), call.get("running_var")

    def again() -> Any:
        return torch.nn.functional.batch_norm(
            torch.cat([given, given]), None if mean is None else mean.clone(),
            None if var is None else var.clone(), call.get("weight"), call.get("bias"), True,
            0.1, float(call.get("eps") or 1e-5))

    if call.passes(again):
        return Confirmed("drop-last-batch", "a batch of 2 rows")
    return None


_TORCH = "import torch\n"

LAYERS: tuple[Contract, ...] = (
    Contract(
        id="layer-input-dtype",
        category="input-dtype-mismatch",
        api="torch.nn.Linear / Conv / RNN",
        sites=(("torch/nn/modules/linear.py", "forward"),
               ("torch/nn/modules/conv.py", "_conv_forward"),
               ("torch/nn/modules/rnn.py", "forward")),
        argument="input",
        says="inputs of the layer's weights' dtype",
        check=_input_dtype,
        trial=_input_dtype_trial,
        repairs=("cast-float32",),
        title="a layer got inputs of another dtype than its weights (float64 arrays from "
              "numpy, int features, into float32 weights)",
        hint="make the inputs in the layer's dtype where the script makes them: "
             "dtype=np.float32, or torch.tensor(..., dtype=torch.float32)",
        examples=(
            Example(_TORCH + "torch.nn.Linear(4, 2)(torch.zeros(3, 4, dtype=torch.float64))\n"),
            Example("import numpy as np\nimport torch\n"
                    "torch.nn.Conv1d(2, 4, 3)(torch.from_numpy(np.zeros((5, 2, 8))))\n"),
            Example(_TORCH + "torch.nn.Linear(4, 2)(torch.zeros(3, 4))\n", breaks=False),
        ),
    ),
    Contract(
        id="layer-input-device",
        category="device-mismatch",
        api="torch.nn.Linear / Conv / RNN / Embedding",
        sites=(("torch/nn/modules/linear.py", "forward"),
               ("torch/nn/modules/conv.py", "_conv_forward"),
               ("torch/nn/modules/rnn.py", "forward"),
               ("torch/nn/functional.py", "embedding")),
        argument="input",
        says="inputs on the device of the layer's weights",
        check=_input_device,
        trial=_input_device_trial,
        repairs=("move-to-device",),
        title="a layer got inputs on another device than its weights (the batch left on "
              "the CPU while the model was moved to the GPU)",
        hint="move each batch to the model's device where the loop takes it "
             "(x = x.to(device)), or build the model and the data on one device",
        examples=(  # the meta device stands in for a GPU on a CPU-only machine
            Example(_TORCH + "torch.nn.Linear(4, 2).to('meta')(torch.zeros(3, 4))\n"),
            Example(_TORCH + "torch.nn.LSTM(4, 8).to('meta')(torch.zeros(5, 1, 4))\n"),
            Example(_TORCH + "torch.nn.Linear(4, 2).to('meta')(torch.zeros(3, 4, "
                             "device='meta'))\n", breaks=False),
        ),
    ),
    Contract(
        id="linear-input-size",
        category="layer-size-mismatch",
        api="torch.nn.Linear",
        sites=(("torch/nn/modules/linear.py", "forward"),),
        argument="input",
        says="inputs whose last axis is the layer's in_features",
        check=_input_size,
        examples=(
            Example(_TORCH + "torch.nn.Linear(768, 2)(torch.zeros(3, 384))\n"),
            Example(_TORCH + "torch.nn.Linear(384, 2)(torch.zeros(3, 384))\n", breaks=False),
        ),
    ),
    Contract(
        id="embedding-index-dtype",
        category="float-token-ids",
        api="torch.nn.functional.embedding",
        sites=(("torch/nn/functional.py", "embedding"),),
        argument="input",
        says="integer indices (int64)",
        check=_index_dtype,
        trial=_index_dtype_trial,
        repairs=("cast-int64",),
        examples=(
            Example(_TORCH + "torch.nn.Embedding(10, 4)(torch.zeros(2, 5))\n"),
            Example("import numpy as np\nimport torch\n"
                    "torch.nn.Embedding(10, 4)(torch.from_numpy(np.zeros((2, 5))))\n"),
            Example(_TORCH + "torch.nn.Embedding(10, 4)(torch.zeros(2, 5, dtype=torch.long))\n",
                    breaks=False),
        ),
    ),
    Contract(
        id="conv-input-layout",
        category="conv-input-layout",
        api="torch.nn.Conv1d / Conv2d / Conv3d",
        sites=(("torch/nn/modules/conv.py", "_conv_forward"),),
        argument="input",
        says="inputs with their channels on axis 1 (batch, channels, ...)",
        check=_conv_layout,
        trial=_conv_layout_trial,
        repairs=("channels-first", "add-channel-axis"),
        title="a convolution given inputs whose channels are not on axis 1 (images kept "
              "channels-last, or a batch without its channel axis)",
        hint="put the channels on axis 1 where the batch is made (x.permute(0, 3, 1, 2) "
             "for channels-last images, x.unsqueeze(1) for one channel)",
        examples=(
            Example(_TORCH + "torch.nn.Conv2d(3, 8, 3)(torch.zeros(4, 16, 16, 3))\n"),
            Example(_TORCH + "torch.nn.Conv2d(1, 8, 3)(torch.zeros(4, 16, 16))\n"),
            Example(_TORCH + "torch.nn.Conv2d(3, 8, 3)(torch.zeros(4, 3, 16, 16))\n",
                    breaks=False),
        ),
    ),
    Contract(
        id="norm-input-size",
        category="layer-size-mismatch",
        api="torch.nn.LayerNorm",
        sites=(("torch/nn/functional.py", "layer_norm"),),
        argument="input",
        says="inputs whose last axes are the norm's normalized_shape",
        check=_norm_shape,
        examples=(
            Example(_TORCH + "torch.nn.LayerNorm(20)(torch.zeros(3, 16))\n"),
            Example(_TORCH + "torch.nn.LayerNorm(16)(torch.zeros(3, 16))\n", breaks=False),
        ),
    ),
    Contract(
        id="embedding-index-range",
        category="index-beyond-embedding",
        title="ids at or beyond an embedding's number of rows (token type ids past the "
              "model's type_vocab_size, ids past its vocabulary, positions past its table)",
        hint="make the ids where the script makes them stay below the embedding's rows (the "
             "model's config names its sizes: vocab_size, type_vocab_size, "
             "max_position_embeddings)",
        api="torch.nn.functional.embedding",
        sites=(("torch/nn/functional.py", "embedding"),),
        argument="input",
        says="indices below the embedding's number of rows",
        check=_index_range,
        examples=(
            Example(_TORCH + "torch.nn.Embedding(10, 4)(torch.tensor([[1, 12]]))\n"),
            Example(_TORCH + "torch.nn.Embedding(10, 4)(torch.tensor([[1, 9]]))\n", breaks=False),
        ),
    ),
    Contract(
        id="batch-norm-rows",
        category="batch-norm-single-row",
        api="torch.nn.functional.batch_norm",
        sites=(("torch/nn/functional.py", "batch_norm"),),
        argument="input",
        says="more than one value per channel in training",
        check=_norm_rows,
        trial=_norm_rows_trial,
        repairs=("drop-last-batch",),
        title="a batch norm layer in training got a batch of one row (the last, short batch "
              "of a loader whose dataset size leaves a remainder of 1)",
        hint="drop the last, incomplete batch of the training DataLoader (drop_last=True), "
             "or choose a batch size that leaves no single row",
        examples=(
            Example(_TORCH + "torch.nn.BatchNorm1d(4)(torch.zeros(1, 4))\n"),
            Example(_TORCH + "torch.nn.BatchNorm1d(4).eval()(torch.zeros(1, 4))\n",
                    breaks=False),
            Example(_TORCH + "torch.nn.BatchNorm1d(4)(torch.zeros(2, 4))\n", breaks=False),
        ),
    ),
)
