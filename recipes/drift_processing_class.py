"""api-drift: ``Trainer(tokenizer=...)`` <-> ``Trainer(processing_class=...)``.

transformers 4.46.0 renamed the argument; 5.x rejects ``tokenizer=`` ("unexpected keyword
argument 'tokenizer'"), releases before 4.46 reject ``processing_class=``. The name is
chosen by the target environment's version.
"""

from __future__ import annotations

from autofix.toolkit import Example, patterns
from autofix.toolkit.versions import PROCESSING_CLASS_SINCE

from ._drift import KeywordRename


class RenameTokenizerArgument(KeywordRename):
    id = "drift-processing-class"
    category = "api-drift"
    requires_words = (("Trainer", "Seq2SeqTrainer"),)
    requires_imports = ("transformers",)
    title = "use the tokenizer argument name of the installed transformers Trainer"
    CALL = patterns.TRAINER
    OLD, NEW, SINCE = "tokenizer", "processing_class", PROCESSING_CLASS_SINCE

    examples = (
        Example(
            before=("from transformers import Trainer\n"
                    "trainer = Trainer(model, args, tokenizer=tokenizer)\n"),
            after=("from transformers import Trainer\n"
                   "trainer = Trainer(model, args, processing_class=tokenizer)\n"),
            evidence="TypeError: Trainer.__init__() got an unexpected keyword argument "
                     "'tokenizer'",
        ),
        Example(  # an old install wants tokenizer=
            before=("from transformers import Trainer as T\n"
                    "T(model, args, processing_class=tok)\n"),
            after=("from transformers import Trainer as T\n"
                   "T(model, args, tokenizer=tok)\n"),
            versions={"transformers": "4.44.0"},
            evidence="TypeError: __init__() got an unexpected keyword argument "
                     "'processing_class'",
        ),
        Example(  # already right for 5.x
            before=("from transformers import Trainer\n"
                    "Trainer(model, args, processing_class=tok)\n"),
            evidence="TypeError: __init__() got an unexpected keyword argument 'tokenizer'",
        ),
    )
