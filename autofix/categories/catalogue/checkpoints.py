"""Saving and reloading what was trained, and what a script assumes of its surroundings:
faults that come after the training loop (a checkpoint reloaded with ``torch.load``, a
state dict saved from a ``DataParallel`` wrapper, a model or tokenizer reloaded from a
folder that lacks it, a Keras model saved as HDF5), the TensorFlow side of a checkpoint
that holds PyTorch weights, Keras given Python lists, and a launcher's variables read
without a launcher. Messages measured on transformers 5.24 / torch 2.13 CPU, and
transformers 4.57.6 / TensorFlow 2.21 with tf-keras for the Keras ones (the corpus cases
d47, d48, d51, d53-d55, d57, d59, d61 of ``sample_scripts/corpus``)."""

from __future__ import annotations

import re

from autofix.categories.failure import Failure
from autofix.categories.model import Category

#: The variables torchrun / accelerate launch set in every process, and the value they
#: have for a single process (the fix's default).
LAUNCHER_VARIABLES = {"LOCAL_RANK": "0", "RANK": "0", "WORLD_SIZE": "1",
                      "LOCAL_WORLD_SIZE": "1", "GROUP_RANK": "0", "NODE_RANK": "0"}

_KEYS = re.compile(r'"([^"]+)"')


def state_dict_keys(message: str) -> tuple[set[str], set[str]]:
    """(missing, unexpected) keys listed in torch's ``load_state_dict`` error message."""
    missing_part, _, rest = message.partition("Unexpected key(s) in state_dict:")
    missing_part = missing_part.partition("Missing key(s) in state_dict:")[2]
    unexpected_part = re.split(r"\n\s*size mismatch", rest)[0]
    return set(_KEYS.findall(missing_part)), set(_KEYS.findall(unexpected_part))


def module_prefix(failure: Failure) -> bool | None:
    """True when every unexpected key is ``module.`` + a missing key (a state dict saved
    from a ``DataParallel``/``DistributedDataParallel`` wrapper, loaded into the bare
    model); False when the keys say otherwise; None when the message lists none."""
    missing, unexpected = state_dict_keys(failure.exc.message)
    if not missing or not unexpected:
        return None
    return all(k.startswith("module.") for k in unexpected) and \
        {k.removeprefix("module.") for k in unexpected} == missing


def launcher_variable(failure: Failure) -> bool | None:
    """True when the ``KeyError`` names a launcher variable (:data:`LAUNCHER_VARIABLES`)
    read from ``os.environ`` and the run was not started by a launcher (the probe reports
    no rank)."""
    key = failure.exc.message.strip().strip("'\"")
    if key not in LAUNCHER_VARIABLES:
        return False
    return failure.probe.rank is None


CHECKPOINTS: tuple[Category, ...] = (
    Category(
        id="weights-only-unpickling",
        title="torch.load (weights_only=True since PyTorch 2.6) refuses a checkpoint that "
              "holds Python objects",
        patterns=(r"Weights only load failed",),
        examples=("v5.txt",),
        hint="the checkpoint holds objects beyond tensors (a NumPy scalar such as an "
             "accuracy from np.mean): store plain Python numbers (float(...)) in what you "
             "torch.save, or load a file your own script wrote with "
             "torch.load(path, weights_only=False) (PyTorch's own advice, for trusted files "
             "only)",
    ),
    Category(
        id="shared-tensors-custom-model",
        no_recipe="whether to save the inner model, give the wrapper a PreTrainedModel base "
                  "or turn saving off is the user's design choice: autofix advises",
        title="Trainer saves a model that is not a PreTrainedModel and shares tensors (tied "
              "weights)",
        patterns=(r"Some tensors share memory, this will lead to duplicate memory on disk",),
        examples=("v5.txt",),
        hint="Trainer saves a model that is not a PreTrainedModel with safetensors' "
             "save_file, which refuses tied weights (word embeddings shared with the output "
             "layer): save the inner Hugging Face model yourself (model.<inner>."
             "save_pretrained(dir), with save_strategy=\"no\"), or make the wrapper a "
             "PreTrainedModel; transformers 5 has no save_safetensors=False switch",
    ),
    Category(  # no message: found by the probe when the folder is read (saved.py)
        id="tokenizer-not-saved",
        title="a tokenizer reloaded from a folder the script saved only the model to",
        hint="save the tokenizer next to the model (tokenizer.save_pretrained(dir) after "
             "model.save_pretrained(dir)), or give Trainer processing_class=tokenizer and "
             "save with trainer.save_model(dir)",
    ),
    Category(
        id="state-dict-key-prefix",
        title="a state dict saved from a DataParallel wrapper ('module.' keys) loaded into "
              "the bare model",
        patterns=(r"Error\(s\) in loading state_dict for",),
        check=module_prefix,
        needs_facts=True,
        examples=("v5.txt",),
        hint="every unexpected key is 'module.' + a missing key: save the wrapped model's "
             "inner module (torch.save(model.module.state_dict(), path)), or strip the "
             "prefix when loading",
    ),
    Category(
        id="from-pretrained-on-file",
        no_recipe="reloading a state dict needs the model built first, which the script "
                  "decides: autofix advises",
        title="from_pretrained given a weights file (torch.save'd state dict), not a folder",
        patterns=(r"Repo id must be in the form 'repo_name' or 'namespace/repo_name': "
                  r"'[^']*\.(pt|pth|bin|ckpt|safetensors|h5)'",),
        examples=("v5.txt",),
        hint="from_pretrained reads a folder written by save_pretrained (or a Hub id): save "
             "the best model with model.save_pretrained(best_dir) and reload from that "
             "folder, or build the model and call "
             "model.load_state_dict(torch.load(best_path))",
    ),
    Category(
        id="keras-unconverted-inputs",
        title="Keras fit given the tokenizer's Python lists (no padding, no arrays)",
        patterns=(r"Failed to find data adapter that can handle input: .*<class 'list'>",),
        examples=("v4-tf.txt",),
        hint="Keras needs arrays: tokenize with padding=True, return_tensors=\"np\" and pass "
             "the labels as an array (np.array(labels) or series.to_numpy())",
    ),
    Category(
        id="keras-h5-subclassed-model",
        recipes=("keras-checkpoint-weights", "keras-save-pretrained"),
        title="a Hugging Face TF model (a subclassed Keras model) saved as HDF5",
        patterns=(r"Saving the model to HDF5 format requires the model to be a Functional "
                  r"model or a Sequential model",),
        examples=("v4-tf.txt",),
        hint="save it the Hugging Face way, model.save_pretrained(folder) (reload with "
             "from_pretrained), or only its weights with model.save_weights(path)",
    ),
    Category(
        id="tf-from-pytorch-weights",
        title="a TensorFlow model loaded from a checkpoint that holds only PyTorch weights",
        patterns=(r"'builtins\.safe_open' object is not iterable",),
        frame_patterns=(r"modeling_tf_pytorch_utils\.py:\w+: ",),
        examples=("v4-tf.txt",),
        hint="the checkpoint ships model.safetensors (PyTorch) and no tf_model.h5: load it "
             "with from_pretrained(..., from_pt=True)",
    ),
    Category(
        id="launcher-env-missing",
        title="a variable that torchrun or accelerate launch sets (LOCAL_RANK, WORLD_SIZE) "
              "read in a process started without a launcher",
        types=("KeyError",),
        frame_guards=(r"[<(]frozen os[>)]:__getitem__: |os\.py:__getitem__: ",),
        check=launcher_variable,
        needs_facts=True,
        examples=("v5.txt",),
        hint="started with plain python, the launcher's variables are not set: read them "
             "with a single-process default (int(os.environ.get(\"LOCAL_RANK\", 0))), or "
             "start the script with torchrun",
    ),
)
