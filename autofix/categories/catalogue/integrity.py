"""Silent faults of data and evaluation: invariants a run breaks without an error, each
checked on the run's real objects (``autofix/run/child/{loss_inputs, metric_inputs,
label_maps, split_rows, label_masks}.py``, sent as ``invariant`` events) or read from the
source (``stats-before-split``, :mod:`autofix.toolkit.source_findings`).

Each is a run finding: the engine tries its recipe on a healthy run and keeps the fix only
when the next run no longer shows the finding and still trains (``FINDING`` proof in
:mod:`autofix.loop.verdicts`), and the script's own evaluation is no worse after it
(``Proof.invariant``); a finding no recipe clears ends the session ``findings``.
"""

from __future__ import annotations

from typing import Any

from autofix.categories.model import Category, Kind, Proof
from autofix.types import Finding, SourceFacts


def _stats_before_split(facts: SourceFacts) -> list[Finding]:
    """``stats-before-split``: the statistics the source reader found taken on all rows of
    a value that is split into train and test rows (the reading ``stats-before-split``),
    one finding per statistic's line, rows and split."""
    leaks: dict[tuple[int, str, int], list[dict[str, Any]]] = {}
    for leak in facts["stats-before-split"]:
        leaks.setdefault((leak["line"], leak["rows"], leak["split_line"]), []).append(leak)
    out = []
    for (line, rows, split_line), group in leaks.items():
        shown = group[0]["shown"]
        stats = " and ".join(f"`{leak['statistic']}`" for leak in group)
        what = f"`{shown}` computes {stats}" if shown and len(shown) <= 100 else stats
        then = "then splits" if split_line > line else "already split"
        out.append(Finding(
            "stats-before-split", 0,
            f"line {line}: {what} on all rows of `{rows}`, which line {split_line} {then} "
            f"with {group[0]['how']}: the test rows' statistics leak into training "
            "(and into every number measured on the test rows); compute the statistics "
            "on the training rows only, after the split, and apply them to both"))
    return out


#: What the run after a fix of a silent fault must show: its finding gone, the script's own
#: evaluation no worse (a healthy run after it is no proof by itself).
INVARIANT = Proof(invariant=True)

INTEGRITY: tuple[Category, ...] = (
    Category(
        id="metric-on-flat-argmax",
        title="the predictions a metric compares with the labels are not one class id per "
              "row (an argmax without a dimension, or over the batch axis): the metric is "
              "meaningless and nothing raises",
        hint="take the argmax over the class axis, argmax(dim=-1) / np.argmax(x, axis=-1), "
             "where the predictions are made (a run finding: the probe checks each argmax "
             "of the user's code and compute_metrics on predictions right on every row)",
        kind=Kind.ROOT_CAUSE,
        proof=Proof(invariant=True, changes="metric"),
    ),
    Category(
        id="label-encoding-mismatch",
        title="the splits map labels to ids in different ways (an encoder fitted per "
              "split, ids in order of appearance or of a set): the evaluation labels mean "
              "other classes than the training labels",
        hint="fit one encoder (one label map, one ClassLabel) on the training labels and "
             "apply it to every split (a run finding: the probe compares the mappings the "
             "run builds)",
        kind=Kind.ROOT_CAUSE,
        proof=INVARIANT,
    ),
    Category(
        id="stats-before-split",
        title="normalisation statistics (mean/std, min/max, a scaler's fit) computed on all "
              "rows before they are split into train and test: the test rows leak into "
              "training",
        hint="split first, compute the statistics on the training rows only and apply them "
             "to both splits (a source finding: autofix/toolkit/source_findings.py)",
        no_recipe="the statistics are computed where the recipe cannot move them after the "
                  "split (inside a helper, or the split is of a dataset object): the finding "
                  "names the lines",
        kind=Kind.ROOT_CAUSE,
        proof=INVARIANT,
        source_findings=_stats_before_split,
    ),
    Category(
        id="eval-rows-in-training",
        title="rows of the evaluation data are also training rows (a split made twice, an "
              "evaluation set cut from the training set): the held-out metric scores "
              "memorised rows",
        hint="evaluate on a split made once, apart from the training rows (a run finding: "
             "the probe hashes the rows of the training and evaluation data)",
        no_recipe="which rows are held out is the script's data design: the finding names "
                  "the data and the share of rows it shares",
        kind=Kind.ROOT_CAUSE,
    ),
    Category(
        id="probabilities-to-logit-loss",
        title="a loss that applies log_softmax or sigmoid itself (CrossEntropyLoss, "
              "BCEWithLogitsLoss) or expects log-probabilities (NLLLoss) is given "
              "probabilities: it trains slowly and worse, nothing raises",
        hint="give the loss the logits: drop the softmax/sigmoid on the loss's path (keep "
             "it for predictions; the argmax of logits is the argmax of probabilities), or "
             "log_softmax for NLLLoss (a run finding: the probe reads the loss's input)",
        kind=Kind.ROOT_CAUSE,
        proof=Proof(invariant=True, changes="loss"),
    ),
    Category(
        id="labels-masked-beyond-padding",
        title="labels masked where the inputs are not padding: every end-of-text token of "
              "the batch is labelled -100, so the model never learns to end its text",
        hint="mask the padding positions only: pad with a token distinct from the "
             "end-of-text token (tokenizer.pad_token = tokenizer.unk_token, or add '<pad>' "
             "and resize the embeddings) (a run finding: the probe reads the first training "
             "batch's labels and attention mask)",
        kind=Kind.ROOT_CAUSE,
        proof=INVARIANT,
    ),
)
