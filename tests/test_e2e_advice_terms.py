"""Advice in the script's own terms, through the real stack: each advice-only fault of
two code shapes, a hand loop and a ``Trainer`` (``tests/scripts/advice_terms/``), run
by the real CLI in a throwaway repository.

The advice a session gives up with (the ``--report``'s ``hint``) must name the script's
own variable and line, and every ``X.method(...)`` it proposes must call a name the script
binds or imports: never ``ds.filter`` for a script whose rows are a pandas DataFrame.

- loss-is-none: the model called without labels in a hand loop: fixed with the script's
  ``targets`` tensor; with the class ids only a list in the batch dict, the advice names
  ``torch.tensor(chunk['label'])``; the Trainer face of it (label-column-unnamed, from the script's
  own ``rename_column``) is fixed at that rename, in a ``DatasetDict`` too
  (``train_dataset=data["train"]``);
- missing-text-values: pandas rows (``frame.dropna``) and a ``datasets`` split
  (``raw.filter``), with the columns the tokenizer reads on the failing line;
- float-token-ids: ``torch.FloatTensor`` in a hand loop is fixed at that token; made in a
  helper's return, the advice names the user's ``ids`` tensor; made by the user's
  ``collate`` given to ``Trainer``, that collator;
- longer-than-positions: the user's tokenizer and model by name, with the model's 16
  positions;
- multi-label-ids-not-multi-hot: the user's split, its column and the head's 3 classes;
- model-without-head (a Trainer's fault only): the user's ``encoder`` and its task class
  with the split's 3 classes.

Cost: fourteen sessions of a tiny BERT (hidden 32, 2 layers, MiniLM's tokenizer), two at
once, one thread each, ``--max-steps 3``.
"""

from __future__ import annotations

import ast
import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import git
import pytest

from .conftest import SAMPLES, make_repo, run_autofix, trailers

pytestmark = pytest.mark.e2e

SCRIPTS = Path(__file__).parent / "scripts" / "advice_terms"
CASES = tuple(sorted(p.name for p in SCRIPTS.glob("*.py")))


@dataclass(frozen=True)
class Session:
    script: str
    repo: git.Repo
    returncode: int
    output: str
    report: dict[str, object]

    @property
    def hint(self) -> str:
        return str(self.report.get("hint", ""))

    @property
    def category(self) -> str:
        runs = self.report["runs"]
        assert isinstance(runs, list) and runs
        return str(runs[0]["category"])


def _run(script: str, root: Path) -> Session:
    repo = make_repo(root, {script: SCRIPTS / script, "data": SAMPLES / "data"})
    done = run_autofix([script, "--branch", "fixes", "--max-steps", "3", "--timeout", "600",
                        "--report", "../report.json"], root, timeout=1200,
                       env={"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    report = json.loads((root.parent / "report.json").read_text())
    return Session(script, repo, done.returncode, done.stdout + done.stderr, report)


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Session]:
    roots = {s: tmp_path_factory.mktemp(Path(s).stem) / "repo" for s in CASES}
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(CASES, pool.map(lambda s: _run(s, roots[s]), CASES), strict=True))


def _bound_names(source: str) -> set[str]:
    """Every name the script binds or imports (``import torch`` binds ``torch``)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.FunctionDef | ast.arg):
            names.add(node.name if isinstance(node, ast.FunctionDef) else node.arg)
    return names


def _foreign_calls(hint: str, source: str) -> list[str]:
    """The ``X.method(`` (``X.y.method(``) of the advice whose ``X`` the script neither
    binds nor imports."""
    bound = _bound_names(source)
    calls = re.findall(r"(?<![\w.])([A-Za-z_]\w*)(?:\.\w+)*\.(\w+)\(", hint)
    return [f"{owner}...{method}(" for owner, method in calls if owner not in bound]


def _advised(session: Session, category: str, *own: str) -> None:
    """The session gave up on ``category`` (exit 1, nothing committed) with advice that
    names the failing line and each of ``own``, and no call on a name foreign to it."""
    assert session.returncode == 1, session.output[-3000:]
    assert session.report["status"] == "gave_up"
    assert session.category == category, session.output[-3000:]
    assert "fixes" not in [h.name for h in session.repo.heads]
    source = (SCRIPTS / session.script).read_text()
    hint = session.hint
    assert re.search(rf"{re.escape(session.script)}, line \d+", hint), hint
    for word in own:
        assert word in hint, (word, hint)
    assert not _foreign_calls(hint, source), (_foreign_calls(hint, source), hint)


def test_loss_none_in_a_hand_loop_is_fixed_with_the_scripts_labels(
        sessions: dict[str, Session]) -> None:
    session = sessions["loss_none_plain.py"]
    assert session.returncode == 0, session.output[-3000:]
    assert trailers(session.repo, "fixes", "main") == ["loss-is-none"]
    fixed = (session.repo.commit("fixes").tree / session.script).data_stream.read().decode()
    calls = [n for n in ast.walk(ast.parse(fixed)) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Name) and n.func.id == "model"]
    assert [ast.unparse(k.value) for c in calls for k in c.keywords if k.arg == "labels"] \
        == ["targets"]
    runs = session.report["runs"]
    assert isinstance(runs, list) and runs[-1]["outcome"] in ("budget", "ok")


def test_loss_none_without_a_labels_tensor_names_the_scripts_list(
        sessions: dict[str, Session]) -> None:
    session = sessions["loss_none_list.py"]
    _advised(session, "loss-is-none", "`out`", "labels=torch.tensor(chunk['label'])",
             "BertForSequenceClassification")
    assert "rename_column" not in session.hint


def test_a_trainer_whose_own_rename_hides_the_labels_is_fixed_at_that_rename(
        sessions: dict[str, Session]) -> None:
    session = sessions["loss_none_trainer.py"]
    assert session.returncode == 0, session.output[-3000:]
    assert trailers(session.repo, "fixes", "main") == ["label-column-unnamed"]
    fixed = (session.repo.commit("fixes").tree / session.script).data_stream.read().decode()
    assert 'train = train.rename_column("label", "labels")' in fixed
    assert '"gold"' not in fixed
    assert fixed.count("rename_column") == 1  # changed in place, not renamed twice
    assert session.hint == ""


def test_a_split_of_a_datasetdict_is_fixed_at_the_scripts_last_rename(
        sessions: dict[str, Session]) -> None:
    session = sessions["labels_renamed_in_splits.py"]
    assert session.returncode == 0, session.output[-3000:]
    assert trailers(session.repo, "fixes", "main") == ["label-column-unnamed"]
    fixed = (session.repo.commit("fixes").tree / session.script).data_stream.read().decode()
    assert 'data = data.rename_column("y", "labels")' in fixed
    assert 'data = data.rename_column("label", "y")' in fixed


def test_missing_text_in_a_pandas_loop_is_dropped_from_the_dataframe(
        sessions: dict[str, Session]) -> None:
    session = sessions["missing_text_plain.py"]
    _advised(session, "missing-text-values",
             "frame = frame.dropna(subset=['premise', 'hypothesis'])")
    assert ".filter(" not in session.hint


def test_missing_text_in_a_datasets_map_is_filtered_from_the_split(
        sessions: dict[str, Session]) -> None:
    session = sessions["missing_text_trainer.py"]
    _advised(session, "missing-text-values", "raw = raw.filter(", "ex['premise'] is not None",
             "ex['hypothesis'] is not None")
    assert "dropna" not in session.hint and "ex['text']" not in session.hint


def test_float_ids_in_a_hand_loop_are_made_int64_at_their_token(
        sessions: dict[str, Session]) -> None:
    session = sessions["float_ids_plain.py"]
    assert session.returncode == 0, session.output[-3000:]
    assert trailers(session.repo, "fixes", "main") == ["float-token-ids"]
    fixed = (session.repo.commit("fixes").tree / session.script).data_stream.read().decode()
    assert 'ids = torch.LongTensor(enc["input_ids"])' in fixed
    assert "torch.FloatTensor(" not in fixed


def test_float_ids_from_a_helper_are_made_int64_in_the_helper(
        sessions: dict[str, Session]) -> None:
    """The embedding's index contract, followed back through the helper's return to the
    tensor it makes: the helper makes int64 ids, the call sites stay as written."""
    session = sessions["float_ids_helper.py"]
    assert session.returncode == 0, session.output[-3000:]
    assert trailers(session.repo, "fixes", "main") == ["float-token-ids"]
    fixed = (session.repo.commit("fixes").tree / session.script).data_stream.read().decode()
    assert "    return torch.LongTensor(values)\n" in fixed
    assert "ids = as_tensor(enc[\"input_ids\"])" in fixed


def test_float_ids_from_a_trainers_collator_name_that_collator(
        sessions: dict[str, Session]) -> None:
    session = sessions["float_ids_trainer.py"]
    _advised(session, "float-token-ids", "`collate` (the data_collator)")


@pytest.mark.parametrize(("script", "tokenizer", "model"), [
    ("positions_plain.py", "tok", "net"), ("positions_trainer.py", "tokenizer", "model")])
def test_longer_than_positions_names_the_scripts_tokenizer_and_model(
        sessions: dict[str, Session], script: str, tokenizer: str, model: str) -> None:
    _advised(sessions[script], "longer-than-positions", f"`{tokenizer}` truncates to 512",
             f"`{model}` has 16 positions", "max_length=16",
             f"{tokenizer}.model_max_length = 16")


@pytest.mark.parametrize(("script", "split"), [
    ("multi_label_ids_plain.py", "rows"), ("multi_label_ids_trainer.py", "topics")])
def test_multi_label_ids_are_made_multi_hot_in_the_scripts_split(
        sessions: dict[str, Session], script: str, split: str) -> None:
    _advised(sessions[script], "multi-label-ids-not-multi-hot",
             f"the 'labels' column of `{split}` holds lists of class ids",
             f"{split} = {split}.map(lambda ex: {{'labels': [float(i in ex['labels']) "
             "for i in range(3)]})")


def test_a_base_model_given_to_trainer_names_its_variable_and_task_class(
        sessions: dict[str, Session]) -> None:
    _advised(sessions["base_model_trainer.py"], "model-without-head",
             "`encoder` is a BertModel", "BertForSequenceClassification",
             "num_labels=3 (the 'label' column's class ids)")
