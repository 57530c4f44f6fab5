"""The mutation benchmark's generator (``benchmarks/bench_mutations.py``): its operators, its
declarations and what it counts. The benchmark's sessions are not run here (its figures are
in docs/benchmarks.md, with the command)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest
import tomllib

from autofix.categories import all_categories
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_mutations as bench  # noqa: E402
import mutation_kinds as kinds  # noqa: E402
from mutation_ops import (  # noqa: E402
    AnchorError,
    Decorate,
    DropStatement,
    InsertAfter,
    MoveStatement,
    Replace,
    ReplaceStatement,
    Seq,
    SetArg,
    WrapWith,
    mutate,
)

#: The five top-level classes of Humbatova et al.'s taxonomy (ICSE 2020).
TAXONOMY_ROOTS = ("Model", "Tensors and Inputs", "Training", "GPU Usage", "API")

LOOP = '''\
import torch


def train_epoch(model, loader, optimizer, scheduler):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    scheduler.step()


loader = DataLoader(train_set, batch_size=16, shuffle=True,
                    drop_last=True)
val_loader = DataLoader(val_set, batch_size=20)
NUM_LABELS = 3
'''


@pytest.fixture(scope="module")
def mutants() -> list[kinds.Mutant]:
    return kinds.mutants()


def test_at_least_150_mutants_each_parsing_and_differing_from_its_original(
        mutants: list[kinds.Mutant]) -> None:
    assert len(mutants) >= 150
    assert len({m.id for m in mutants}) == len(mutants)
    for m in mutants:
        for path, source in m.sources.items():
            original = (kinds.SAMPLES / path).read_text(encoding="utf-8")
            assert source != original, m.id
            ast.parse(source)  # raises for a mutant that does not parse


def test_every_kind_is_seeded_in_at_least_three_styles(mutants: list[kinds.Mutant]) -> None:
    styles: dict[str, set[str]] = {}
    for m in mutants:
        styles.setdefault(m.kind.id, set()).add(m.healthy.style)
    assert set(styles) == {k.id for k in kinds.KINDS}
    thin = {k: sorted(s) for k, s in styles.items() if len(s) < 3}
    assert thin == {}


def test_declarations_are_kebab_case_complete_and_name_known_categories() -> None:
    known = {c.id for c in all_categories()}
    assert set(kinds.EXPECTED) == {k.id for k in kinds.KINDS}
    for k in kinds.KINDS:
        assert kinds.KEBAB.match(k.id), k.id
        assert k.expected and all(kinds.KEBAB.match(e) for e in k.expected), k.id
        assert set(k.expected) <= known, (k.id, set(k.expected) - known)
        assert k.taxonomy.split(" > ")[0] in TAXONOMY_ROOTS, k.taxonomy
        assert k.verdict in ("crash", "silent") and k.description and k.sites


def test_manifest_scripts_exist_in_the_four_styles_and_each_hosts_a_mutant(
        mutants: list[kinds.Mutant]) -> None:
    doc = tomllib.loads((kinds.SAMPLES / "manifest.toml").read_text(encoding="utf-8"))
    ids = [s["id"] for s in doc["script"]]
    assert len(ids) == len(set(ids))
    for entry in doc["script"]:
        assert entry["style"] in kinds.STYLES
        assert (kinds.SAMPLES / entry["script"]).is_file()
        assert all((kinds.SAMPLES / item).exists() for item in entry["copy"])
        metric = entry.get("metric", kinds.Healthy.metric)
        assert re.search(metric, "val acc 0.933\nval stop acc 0.650\n")
        assert 'print(f"val ' in (kinds.SAMPLES / entry["script"]).read_text()
    assert {m.healthy.id for m in mutants} == set(ids)
    assert {s["style"] for s in doc["script"]} == set(kinds.STYLES)


def _diff(before: str, after: str) -> tuple[list[str], list[str]]:
    old, new = before.splitlines(), after.splitlines()
    return [ln for ln in old if ln not in new], [ln for ln in new if ln not in old]


def test_operators_make_the_edit_they_declare() -> None:
    assert _diff(LOOP, mutate(LOOP, Replace("criterion(model(x), y)",
                                            "criterion(model(x).softmax(dim=1), y)")))[1] == \
        ["        loss = criterion(model(x).softmax(dim=1), y)"]
    dropped = mutate(LOOP, SetArg("DataLoader", "drop_last", None))
    assert "loader = DataLoader(train_set, batch_size=16, shuffle=True)" in dropped
    added = mutate(LOOP, SetArg("DataLoader", "shuffle", "True", "val_set"))
    assert "val_loader = DataLoader(val_set, batch_size=20, shuffle=True)" in added
    assert _diff(LOOP, mutate(LOOP, DropStatement("optimizer.zero_grad()"))) == \
        (["        optimizer.zero_grad()"], [])
    moved = mutate(LOOP, MoveStatement("scheduler.step()", "optimizer.step()"))
    assert "        optimizer.step()\n        scheduler.step()\n" in moved
    assert "\n    scheduler.step()" not in moved
    before = mutate(LOOP, MoveStatement("optimizer.zero_grad()", "loss.backward()"))
    assert "loss.backward()\n        optimizer.zero_grad()\n        optimizer.step()" in before
    wrapped = mutate(LOOP, WrapWith("loss = criterion(", "torch.no_grad()"))
    assert "        with torch.no_grad():\n            loss = criterion(model(x), y)\n" in wrapped
    assert "@torch.no_grad()\ndef train_epoch(" in mutate(
        LOOP, Decorate("train_epoch", "torch.no_grad()"))
    assert "NUM_LABELS = 2\n" in mutate(LOOP, ReplaceStatement("NUM_LABELS = 3",
                                                               "NUM_LABELS = 2"))
    inserted = mutate(LOOP, InsertAfter("val_loader =", "x = 1"))
    assert inserted.endswith("batch_size=20)\nx = 1\nNUM_LABELS = 3\n")
    both = mutate(LOOP, Seq((DropStatement("optimizer.zero_grad()"),
                             SetArg("DataLoader", "drop_last", None))))
    assert "zero_grad" not in both and "drop_last" not in both


def test_a_missing_or_ambiguous_anchor_is_an_error_not_another_fault() -> None:
    with pytest.raises(AnchorError, match="no match"):
        mutate(LOOP, Replace("criterion(model(x), labels)", "x"))
    with pytest.raises(AnchorError, match="2 matches"):
        mutate(LOOP, SetArg("DataLoader", "num_workers", "2"))
    assert "num_workers=2" in mutate(LOOP, SetArg("DataLoader", "num_workers", "2", nth=1))
    with pytest.raises(AnchorError):
        mutate(LOOP, SetArg("DataLoader", "pin_memory", None))
    with pytest.raises(cst.ParserSyntaxError):
        mutate("def f(:\n", DropStatement("x"))


def test_a_row_counts_detection_repair_and_wrong_fixes() -> None:
    row = bench.Row("m", "zero-grad-dropped", "functions", "loop_features", "silent",
                    ["zero-grad-missing"], status="fixed", exit_code=0,
                    named=["stalled-loss", "zero-grad-missing"], kept=["zero-grad-missing"],
                    branch_exit=0, metric=0.92, healthy_metric=0.933)
    assert row.detected and row.repaired and row.wrong_kept == []
    row.metric = 0.9  # more than TOLERANCE under the healthy original's
    assert not row.repaired
    row.kept = ["lr-too-high", "zero-grad-missing"]
    assert row.wrong_kept == ["lr-too-high"]
    crash = bench.Row("c", "padding-dropped", "trainer", "trainer_minilm", "crash",
                      ["ragged-batch"], status="fixed", exit_code=0, named=["ragged-batch"],
                      kept=["ragged-batch"], branch_exit=1)
    assert crash.detected and not crash.repaired  # the branch does not run
    control = bench.control_row(kinds.healthy_scripts()["flat_loop"])
    assert bench.mark(control).startswith("ERROR")  # no session ran: no verdict
    control.status, control.exit_code = "clean", 0
    assert control.control and bench.mark(control) == "clean"
    control.named = ["eval-without-eval-mode"]
    assert bench.mark(control) == "FALSE-FINDING"


def test_named_categories_read_every_part_of_a_report() -> None:
    doc = {"fixes": [{"category": "ragged-batch"}], "runs": [{"category": ""},
                                                             {"category": "nan-loss"}],
           "findings": [{"kind": "eval-loader-shuffled"}],
           "dropped": [{"category": "exploding-gradients"}]}
    assert bench.named_categories(doc) == ["eval-loader-shuffled", "exploding-gradients",
                                           "nan-loss", "ragged-batch"]
    assert bench.metric_of("epoch 0\nval acc 0.5\nval acc 0.933\n", r"val acc (\d+\.\d+)") \
        == 0.933


def test_selection_by_kind_style_and_count(mutants: list[kinds.Mutant]) -> None:
    opts = bench.parse(["--only", "lr-times-1000", "--style", "trainer", "project"])
    chosen = bench.select(mutants, opts)
    assert chosen and {m.kind.id for m in chosen} == {"lr-times-1000"}
    assert {m.healthy.style for m in chosen} == {"trainer", "project"}
    one = bench.select(mutants, bench.parse(["--per-style", "1"]))
    pairs = [(m.kind.id, m.healthy.style) for m in one]
    assert len(pairs) == len(set(pairs)) < len(mutants)
    assert len(bench.select(mutants, bench.parse(["--limit", "5"]))) == 5


def test_list_prints_every_mutant(capsys: pytest.CaptureFixture[str],
                                  mutants: list[kinds.Mutant]) -> None:
    assert bench.main(["--list"]) == 0
    out = capsys.readouterr().out
    assert f"{len(mutants)} mutants of {len(kinds.KINDS)} kinds in 4 styles" in out
    assert all(m.id in out for m in mutants)


@pytest.mark.process
def test_a_scratch_repository_holds_the_project_and_its_data(tmp_path: Path) -> None:
    healthy = kinds.healthy_scripts()["project_encoder"]
    m = next(m for m in kinds.mutants() if m.id == "zero-grad-dropped:project_encoder")
    repo = bench.scratch(tmp_path, healthy, m.sources)
    assert (repo / "project_encoder" / "train.py").is_file()
    assert (repo / "data" / "tickets_train.jsonl").is_file()
    engine = (repo / "project_encoder" / "engine.py").read_text()
    assert "zero_grad" not in engine
    tracked = subprocess.run(["git", "-C", str(repo), "ls-files"], capture_output=True,
                             text=True, check=True).stdout.split()
    assert "project_encoder/engine.py" in tracked and "data/tickets.csv" in tracked
    assert bench.kept_categories(repo) == []  # no fixes branch


def test_the_taxonomy_page_names_real_categories_and_every_mutation_kind() -> None:
    from autofix.run.child.call_contracts import CONTRACTS
    from autofix.toolkit.discovery import all_recipes

    page = (ROOT / "docs" / "taxonomy.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([a-z0-9]+(?:-[a-z0-9]+)+)`", page))
    kind_ids = {k.id for k in kinds.KINDS}
    known = {c.id for c in all_categories()} | kind_ids | {r.id for r in all_recipes()} | \
        {c.id for c in CONTRACTS} | {"learning-slowly"}  # a finding of a healthy run
    assert named - known == set()
    assert kind_ids - named == set()
