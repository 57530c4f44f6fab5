"""vocab-size-mismatch: a model built from a config whose ``vocab_size`` is smaller than its
tokenizer's vocabulary.

A model made from a config (``BertConfig(vocab_size=8000, ...)``, a config class's default,
``AutoConfig.from_pretrained(...)`` then ``from_config``) has one embedding row per id of
that ``vocab_size``; a tokenizer with more tokens produces ids past the last row and the
lookup raises ``IndexError: index out of range in self`` (on a GPU a device-side assert).
The facts at the failure measure both sides: the embedding matrix's rows and the largest id
looked up, and the tokenizers the user's frames held (``vocab_size`` and ``len``). A model
trained from scratch takes its vocabulary from its tokenizer (the transformers docs of each
config class: ``vocab_size`` "defines the number of different tokens that can be
represented by the inputs_ids"), so the config call gets ``vocab_size=len(tokenizer)``
(``len`` counts added tokens too). A model loaded with its weights from a checkpoint is
not this recipe's: which of the tokenizer and the checkpoint is the wrong one is the
user's choice, and the reason says so.
"""

from __future__ import annotations

import libcst as cst

from autofix.categories.failure import Failure, ids_at_embedding, user_values_of_kind
from autofix.toolkit import Example, NotApplicable, code, keyword
from autofix.toolkit.patterns import MODEL, MODEL_CONFIG
from autofix.toolkit.scope import PlannedEdits, append_kw, replace_with, string_value
from autofix.toolkit.sources import CommandLine, Literal, literal_source
from autofix.toolkit.values import Values
from autofix.types import ExceptionInfo, FrameFacts

_HEAD = ("from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification\n"
         "tokenizer = AutoTokenizer.from_pretrained('ckpt')\n")


def _failure(ids: int, rows: int, vocab: int, length: int, name: str = "tokenizer"
             ) -> ExceptionInfo:
    """The facts of a failed lookup, for the examples: ids up to ``ids`` against ``rows``,
    the user's frame holding tokenizer ``name`` of ``vocab`` tokens (``length`` with added
    ones)."""
    return ExceptionInfo(type="IndexError", message="index out of range in self", facts=(
        FrameFacts(file="/site-packages/torch/nn/functional.py", line=1, function="embedding",
                   user=False, values={
                       "input": {"kind": "tensor", "dtype": "torch.int64", "shape": [2, 8],
                                 "min": 0, "max": ids},
                       "weight": {"kind": "tensor", "dtype": "torch.float32",
                                  "shape": [rows, 32]}}),
        FrameFacts(file="/u/train.py", line=20, function="<module>", user=True, values={
            name: {"kind": "tokenizer", "vocab_size": vocab, "len": length}})))


class ConfigVocabSize(PlannedEdits):
    id = "config-vocab-size"
    category = "vocab-size-mismatch"
    title = "build the model's config with the tokenizer's vocabulary size"
    requires_imports = ("transformers",)
    nothing_to_do = "no model built from a config call in this file"

    examples = (
        Example(  # a literal smaller than the tokenizer
            before=(_HEAD + "config = BertConfig(vocab_size=8000, hidden_size=32, num_labels=3)\n"
                    "model = BertForSequenceClassification(config)\n"),
            after=(_HEAD + "config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, "
                   "num_labels=3)\n"
                   "model = BertForSequenceClassification(config)\n"),
            evidence="IndexError: index out of range in self",
            failure=_failure(29000, 8000, 30522, 30522),
        ),
        Example(  # a constant defined after the tokenizer: changed where it is defined
            before=(_HEAD + "VOCAB = 8000\n"
                    "model = BertForSequenceClassification(BertConfig(vocab_size=VOCAB))\n"),
            after=(_HEAD + "VOCAB = len(tokenizer)\n"
                   "model = BertForSequenceClassification(BertConfig(vocab_size=VOCAB))\n"),
            evidence="IndexError: index out of range in self",
            failure=_failure(29000, 8000, 30522, 30522),
        ),
        Example(  # a constant set before the tokenizer exists: changed where it is used
            before=("from transformers import AutoTokenizer, BertConfig, BertForMaskedLM\n"
                    "VOCAB = 8000\n"
                    "tokenizer = AutoTokenizer.from_pretrained('ckpt')\n"
                    "model = BertForMaskedLM(BertConfig(vocab_size=VOCAB))\n"),
            after=("from transformers import AutoTokenizer, BertConfig, BertForMaskedLM\n"
                   "VOCAB = 8000\n"
                   "tokenizer = AutoTokenizer.from_pretrained('ckpt')\n"
                   "model = BertForMaskedLM(BertConfig(vocab_size=len(tokenizer)))\n"),
            evidence="IndexError: index out of range in self",
            failure=_failure(29000, 8000, 30522, 30522),
        ),
        Example(  # a dict unpacked into the config: its entry, not a second keyword
            before=(_HEAD + "hp = {'vocab_size': 8000, 'hidden_size': 32}\n"
                    "model = BertForSequenceClassification(BertConfig(**hp, num_labels=2))\n"),
            after=(_HEAD + "hp = {'vocab_size': len(tokenizer), 'hidden_size': 32}\n"
                   "model = BertForSequenceClassification(BertConfig(**hp, num_labels=2))\n"),
            evidence="IndexError: index out of range in self",
            failure=_failure(29000, 8000, 30522, 30522),
        ),
        Example(  # the config class's default (GPT-2's 50257 < a 60000-token tokenizer)
            before=("from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel\n"
                    "tok = AutoTokenizer.from_pretrained('ckpt')\n"
                    "model = GPT2LMHeadModel(GPT2Config(n_layer=2))\n"),
            after=("from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel\n"
                   "tok = AutoTokenizer.from_pretrained('ckpt')\n"
                   "model = GPT2LMHeadModel(GPT2Config(n_layer=2, vocab_size=len(tok)))\n"),
            evidence="IndexError: index out of range in self",
            failure=_failure(59000, 50257, 60000, 60000, "tok"),
        ),
        Example(  # loaded from a checkpoint: which side is wrong is the user's choice
            before=("from transformers import AutoModelForSequenceClassification, "
                    "AutoTokenizer\n"
                    "tokenizer = AutoTokenizer.from_pretrained('other')\n"
                    "model = AutoModelForSequenceClassification.from_pretrained('ckpt')\n"),
            evidence="IndexError: index out of range in self",
            failure=_failure(29000, 8000, 30522, 30522),
        ),
        Example(  # no tokenizer of that size in the facts: nothing to take the size from
            before=(_HEAD + "config = BertConfig(vocab_size=8000)\n"
                    "model = BertForSequenceClassification(config)\n"),
            evidence="IndexError: index out of range in self",
            failure=_failure(9000, 8000, 8000, 8000),
        ),
    )

    def prepare(self, tree: cst.Module) -> None:
        self.values = Values(self)
        exc = self.rc.diagnosis.failure
        failure = Failure(exc) if exc is not None else None
        facts = ids_at_embedding(failure) if failure is not None else None
        if failure is None or facts is None:
            raise NotApplicable("the failing embedding lookup was not measured")
        names = [name for name, value in user_values_of_kind(failure, "tokenizer")
                 if int(value.get("len", 0)) > facts.rows]
        if not names:
            raise NotApplicable(f"no tokenizer with more than the embedding's {facts.rows} "
                                "tokens was seen: the ids come from elsewhere")
        for call in self.program.calls:
            if self.is_qualified(call.func, MODEL):
                self._model(call, names, facts.rows)

    def _model(self, call: cst.Call, names: list[str], rows: int) -> None:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained" \
                and keyword(call, "config") is None:
            self.reason = self.reason or (
                f"the model at line {self.program.line(call)} is loaded from a checkpoint "
                f"with {rows} embedding rows: load the tokenizer from the same checkpoint, "
                "or call model.resize_token_embeddings(len(tokenizer)) to train new rows")
            return
        config = keyword(call, "config") or next(
            (a for a in call.args if a.keyword is None), None)
        if config is None:
            return
        made = [v for v in self.values.origins(config.value)
                if isinstance(v, cst.Call) and self.is_qualified(v.func, MODEL_CONFIG)]
        for place in made:
            tokenizer = next((n for n in names if self.program.resolves(n, place)), None)
            if tokenizer is None:
                self.reason = (f"the tokenizer ({' or '.join(names)}) is not defined where "
                               f"the config at line {self.program.line(place)} is built")
                continue
            value = cst.parse_expression(f"len({tokenizer})")
            old = keyword(place, "vocab_size")
            if old is None and self._in_unpacked(place, tokenizer, value, rows):
                continue
            if old is not None:
                self._replace(place, old.value, tokenizer, value, rows)
            else:
                self.plan_edit(place, append_kw("vocab_size", value),
                               f"vocab_size=len({tokenizer}) (the config's default gave "
                               f"{rows} embedding rows)")

    def _replace(self, place: cst.Call, old: cst.BaseExpression, tokenizer: str,
                 value: cst.BaseExpression, rows: int) -> None:
        """The value ``old`` (the config call's ``vocab_size=`` or its dict entry) becomes
        the tokenizer's size where it is defined (a literal the tokenizer already exists
        at: a constant, an ``argparse`` default), else where it is used."""
        if any(isinstance(v, cst.Call) and code(v) == f"len({tokenizer})"
               for v in self.values.origins(old)):
            self.reason = f"vocab_size is already len({tokenizer})"
            return
        found = literal_source(self.program, old, self.rc.args, "vocab_size")
        if isinstance(found, CommandLine):
            self.reason = (f"vocab_size comes from the command line ({found.flag} "
                           f"{found.value}): pass the tokenizer's size, len({tokenizer})")
            return
        target = found.node if isinstance(found, Literal) \
            and self.program.resolves(tokenizer, found.node) else old
        if not self.program.resolves(tokenizer, target):
            self.reason = (f"{tokenizer} does not exist yet where vocab_size={code(old)} is "
                           f"set (line {self.program.line(old)})")
            return
        where = f" at line {self.program.line(target)}" if target is not old else ""
        self.plan_edit(target, replace_with(value),
                       f"vocab_size: {code(target)} -> len({tokenizer}){where} (the "
                       f"embedding had {rows} rows)")

    def _in_unpacked(self, place: cst.Call, tokenizer: str, value: cst.BaseExpression,
                     rows: int) -> bool:
        """``BertConfig(**hparams)``: the ``vocab_size`` entry of the dict literal that
        ``hparams`` holds is the one to change (a keyword beside it would be passed twice).
        True when a ``**`` argument was there (edited, or the reason says why not)."""
        unpacked = [a for a in place.args if a.star == "**"]
        if not unpacked:
            return False
        for arg in unpacked:
            for found in self.values.origins(arg.value):
                if not isinstance(found, cst.Dict):
                    continue
                for element in found.elements:
                    if isinstance(element, cst.DictElement) \
                            and string_value(element.key) == "vocab_size":
                        if not self.program.resolves(tokenizer, element.value):
                            self.reason = (f"the {code(arg.value)} dict that sets vocab_size is "
                                           f"built before {tokenizer} exists: set its "
                                           f"vocab_size to len({tokenizer}) after that")
                            return True
                        self._replace(place, element.value, tokenizer, value, rows)
                        return True
        self.reason = (f"the config at line {self.program.line(place)} takes "
                       f"{' '.join('**' + code(a.value) for a in unpacked)}, which may set "
                       f"vocab_size: set it to len({tokenizer}) there")
        return True
