"""Classification by where an error is raised, not by its text alone (issue 9, item 2).

The real tracebacks saved under ``autofix/examples/`` are classified by the existing test;
these are the negatives: the same message raised at another site must not get the
category (or its recipe), and TensorFlow graph-mode errors are summarised by the real
message inside them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autofix.categories import EXAMPLES_DIR
from autofix.categories.sites import raised_site
from autofix.categories.tracebacks import inner_message, message_frames, parse_traceback
from autofix.loop.diagnosis import classify, diagnose
from autofix.types import ExceptionInfo, Frame, ProbeReport, RunOutcome, RunResult

SP = "/v/lib/python3.11/site-packages"
UNABLE = ("Unable to create tensor, you should probably activate truncation and/or padding "
          "with 'padding=True' 'truncation=True' to have batched tensors with the same length.")


def _exc(message: str, *frames: tuple[str, str, str], type_: str = "ValueError"
         ) -> ExceptionInfo:
    return ExceptionInfo(type_, message, tuple(Frame(f, 1, fn, text) for f, fn, text in frames))


def _example(rel: str) -> ExceptionInfo:
    exc = parse_traceback((EXAMPLES_DIR / rel).read_text(encoding="utf-8"))
    assert exc is not None
    return exc


@pytest.mark.parametrize(("rel", "site"), [
    ("ragged-batch/v5.txt", "collator"),
    ("ragged-batch/v4-tf.txt", "collator"),
    ("string-labels/v5.txt", "collator"),
    ("map-return-tensors/v5.txt", "map-function"),
    ("map-return-tensors/v4.txt", "map-function"),
    ("label-out-of-range/v5.txt", "loss"),
    ("label-out-of-range/v4-tf.txt", "loss"),  # from the frames inside the graph error
    ("float-labels-on-classifier/v5.txt", "loss"),
    ("int-labels-on-multi-label-head/v5.txt", "loss"),
    ("added-tokens-not-resized/v5.txt", "embedding"),
    ("decode-ignored-labels/v5.txt", "compute-metrics"),
    ("metric-on-logits/v5.txt", "compute-metrics"),
    ("training-args-conflict/v5-strategies.txt", "training-arguments"),
    ("training-args-conflict/v5-best-metric.txt", "trainer"),
    ("keras3-objects/v4-tf.txt", "optimizer"),
])
def test_real_tracebacks_name_their_site(rel: str, site: str) -> None:
    assert raised_site(_example(rel)) == site


def test_unable_to_create_tensor_by_site() -> None:
    user = ("/u/train.py", "tokenize", "return tokenizer(batch['text'], return_tensors='pt')")
    tok = (f"{SP}/transformers/tokenization_utils_base.py", "convert_to_tensors", "raise")
    in_map = _exc(UNABLE, ("/u/train.py", "<module>", "tok = raw.map(tokenize, batched=True)"),
                  (f"{SP}/datasets/arrow_dataset.py", "apply_function", "function(*args)"),
                  user, tok)
    in_collator = _exc(UNABLE, ("/u/train.py", "<module>", "trainer.train()"),
                       (f"{SP}/transformers/data/data_collator.py", "__call__", "pad(...)"), tok)
    in_own_collate = _exc(UNABLE, ("/u/train.py", "<module>", "for b in loader:"),
                          ("/u/train.py", "collate_fn", "return tok(rows, return_tensors='pt')"),
                          tok)
    assert classify(in_map).id == "map-return-tensors"
    assert classify(in_collator).id == "ragged-batch"
    assert classify(in_own_collate).id == "ragged-batch"
    # raised neither in a collator nor in a map function: no padding verdict at all
    elsewhere = _exc(UNABLE, ("/u/train.py", "<module>", "enc = tok(texts, return_tensors='pt')"),
                     tok)
    assert classify(elsewhere).id == "unknown"


def test_the_real_map_traceback_is_not_ragged_batch() -> None:
    """The shared case's traceback chains "expected sequence of length" (a ragged-batch
    message) under the map function's error: neither may be read as a collator's."""
    exc = _example("map-return-tensors/v5.txt")
    assert "expected sequence of length" in exc.chain[0].message
    assert classify(exc).id == "map-return-tensors"


def test_embedding_index_error_of_positions_is_not_added_tokens() -> None:
    frames = (("/u/train.py", "<module>", "out = model(**batch)"),
              (f"{SP}/transformers/models/bert/modeling_bert.py", "forward",
               "position_embeddings = self.position_embeddings(position_ids)"),
              (f"{SP}/torch/nn/functional.py", "embedding", "return torch.embedding(...)"))
    assert classify(_exc("index out of range in self", *frames,
                         type_="IndexError")).id == "unknown"
    words = (*frames[:1], (f"{SP}/transformers/models/bert/modeling_bert.py", "forward",
                           "inputs_embeds = self.word_embeddings(input_ids)"), frames[2])
    assert classify(_exc("index out of range in self", *words,
                         type_="IndexError")).id == "added-tokens-not-resized"


def test_overflow_outside_compute_metrics_is_not_decode_labels() -> None:
    exc = _exc("out of range integral type conversion attempted",
               ("/u/infer.py", "<module>", "print(tok.batch_decode(ids))"),
               (f"{SP}/transformers/tokenization_utils_fast.py", "_decode", "decode"),
               type_="OverflowError")
    assert classify(exc).id == "unknown"


def test_keras_messages_without_a_keras3_object_are_not_keras3() -> None:
    exc = _exc("Could not interpret optimizer identifier: adamw",
               (f"{SP}/tf_keras/src/optimizers/__init__.py", "get", "raise ValueError("))
    assert classify(exc).id == "unknown"


def test_float_target_error_outside_a_loss_is_not_float_labels() -> None:
    exc = _exc("expected target dtype to be Long or Byte, but got Float",
               ("/u/train.py", "<module>", "acc = my_metric(preds, y)"), type_="RuntimeError")
    assert classify(exc).id == "unknown"  # frames, but no loss among them
    bare = _exc("expected target dtype to be Long or Byte, but got Float", type_="RuntimeError")
    assert classify(bare).id == "float-labels-on-classifier"  # a bare message: text decides
    exc = _exc("expected target dtype to be Long or Byte, but got Float",
               (f"{SP}/transformers/data/data_collator.py", "__call__", "x"),
               type_="RuntimeError")
    assert classify(exc).id == "unknown"


GRAPH = '''Traceback (most recent call last):
  File "/u/train.py", line 30, in <module>
    model.fit(batches)
  File "/v/site-packages/tf_keras/src/utils/traceback_utils.py", line 70, in error_handler
    raise e.with_traceback(filtered_tb) from None
  File "/tmp/__autograph_generated_file1.py", line 15, in tf__train_function
    retval_ = ag__.converted_call(ag__.ld(step_function), (ag__.ld(self),), None, fscope)
ValueError: in user code:

    File "/v/site-packages/tf_keras/src/engine/training.py", line 1398, in train_function  *
        return step_function(self, iterator)
    File "/u/train.py", line 12, in my_loss  **
        return tf.reduce_mean(y_true - y_pred)

    ValueError: Dimensions must be equal, but are 16 and 3 for 'sub' (op: 'Sub')
'''


def test_graph_mode_error_is_summarised_by_its_real_message(tmp_path: Path) -> None:
    exc = parse_traceback(GRAPH)
    assert exc is not None
    assert [f.function for f in message_frames(exc.message)] == ["train_function", "my_loss"]
    assert message_frames(exc.message)[1].text == "return tf.reduce_mean(y_true - y_pred)"
    assert inner_message(exc.message).startswith("ValueError: Dimensions must be equal")
    run = RunResult(RunOutcome.FAILED, 1, 1.0, GRAPH, len(GRAPH), ProbeReport())
    diag = diagnose(run, Path("/u/train.py"))
    assert diag.category == "unknown"
    assert diag.evidence.startswith("ValueError: Dimensions must be equal, but are 16 and 3")


def test_ordinary_messages_have_no_inner_message() -> None:
    assert inner_message("expected sequence of length 3 at dim 1 (got 4)") == ""
    assert message_frames("File \"x.py\", line 1, in f") == ()
