"""What a script reloads after training: a tokenizer from a folder that has none.

A script that saves only the model (``model.save_pretrained(out)``) and later reloads
model and tokenizer from ``out`` gets no error on transformers 5: ``from_pretrained`` on a
folder without tokenizer files builds a tokenizer from the model's ``config.json`` alone,
with a vocabulary of a few special tokens, and every word becomes the unknown token
(transformers 4 raised ``OSError: Can't load tokenizer for ...``). Nothing fails; the
predictions are garbage. So the probe looks at the folder a tokenizer is loaded from: a
local folder holding a saved model (``config.json`` and weights) and none of the files any
tokenizer saves is the fault ``tokenizer-not-saved``, reported as a ``preflight_fault``
(the run goes on as it would).

Standard library only; installed on ``transformers.tokenization_utils_base``.
"""

from __future__ import annotations

import os
import types
from typing import Any

from .contract import Event
from .events import emit

#: Files ``save_pretrained`` writes for some tokenizer (fast, slow, sentencepiece, BPE).
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "vocab.json",
                   "merges.txt", "spiece.model", "sentencepiece.bpe.model", "tokenizer.model",
                   "special_tokens_map.json", "added_tokens.json", "vocab.model")
#: Files that show a model was saved to the folder.
MODEL_FILES = ("model.safetensors", "pytorch_model.bin", "tf_model.h5",
               "model.safetensors.index.json", "pytorch_model.bin.index.json")


class _Seen:
    reported = False


def model_without_tokenizer(path: Any) -> list[str] | None:
    """The folder's model files when ``path`` is a local folder with ``config.json`` and
    model weights but no tokenizer file, else ``None``."""
    try:
        if not isinstance(path, (str, os.PathLike)) or not os.path.isdir(path):
            return None
        names = set(os.listdir(path))
    except OSError:
        return None
    weights = sorted(names & set(MODEL_FILES))
    if "config.json" not in names or not weights or names & set(TOKENIZER_FILES):
        return None
    return ["config.json", *weights]


def patch_tokenizers(module: types.ModuleType) -> None:
    """``PreTrainedTokenizerBase.from_pretrained`` reports a folder that holds a saved model
    and no tokenizer (once a run); it loads as it would."""
    base = getattr(module, "PreTrainedTokenizerBase", None)
    if base is None or getattr(base.from_pretrained, "_autofix", False):
        return
    original = base.from_pretrained.__func__

    def from_pretrained(cls: Any, *args: Any, **kwargs: Any) -> Any:
        path = args[0] if args else kwargs.get("pretrained_model_name_or_path")
        files = model_without_tokenizer(path) if not _Seen.reported else None
        if files is not None:
            _Seen.reported = True
            emit(Event.PREFLIGHT_FAULT, check="tokenizer-files", category="tokenizer-not-saved",
                 evidence=f"{cls.__name__}.from_pretrained read the folder "
                          f"'{os.path.basename(os.path.normpath(str(path)))}', which holds a saved "
                          f"model ({', '.join(files)}) and no tokenizer file: the tokenizer was "
                          "never saved there, and one built without the training vocabulary "
                          "turns every word into the unknown token")
        return original(cls, *args, **kwargs)

    from_pretrained._autofix = True  # type: ignore[attr-defined]
    base.from_pretrained = classmethod(from_pretrained)
