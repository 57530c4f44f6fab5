"""autofix on Hugging Face's official example scripts: healthy, and with the course's faults
seeded into copies of them.

The scripts (transformers' ``run_glue.py``, ``run_glue_no_trainer.py``, ``run_ner.py``,
``run_clm.py`` and the course's chapter 3 notebooks ``section3.ipynb`` / ``section4.ipynb``)
and the kit that turns each into a runnable git repo (local data, the MiniLM-L6 checkpoint,
a tiny GPT-2) live outside this repository, in ``shared/realworld`` (``--realworld``). They
are not copied here: this file only names short anchors in them.

Each session is one real ``autofix`` CLI call in a fresh copy of the kit's case repo:

* healthy: the script as published. Expected: exit 0, status clean, no finding; except
  ``section3.ipynb``, which still writes ``evaluation_strategy=`` (one api-drift fix before
  the first run, then clean).
* seeded: one :class:`Seed` (a small, explicit source edit of our own, or a changed command
  line) committed on top of the case. "Fixed" is exit 0, status fixed and autofix's last run
  trained; "right place" is the seed's :class:`Check` on the branch's version of the script:
  the fix edited the call / keyword / line where that script defines the value, in the
  script's style (for a value set on the command line, the report names the flag). A seed
  whose anchor is not found (or found more often than expected) is an error, not a skip.

    OMP_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/bench_realworld.py \\
        [--only run_glue section4] [--seeds glue-num-labels ...] [--max-steps 10] [--list]

Prints one row per session, then totals; ``--json PATH`` writes the rows.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_REALWORLD = ROOT.parent / "shared" / "realworld"
AUTOFIX = [sys.executable, "-m", "autofix"]
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@local",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@local"}
RUN_ENV = {"OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


class SeedError(RuntimeError):
    """A seed's anchor is missing (or ambiguous): the benchmark is out of date."""


# --- the cases (kit command lines of shared/realworld/README.md) ----------------------------


@dataclass(frozen=True)
class Case:
    name: str
    folder: str  # under WORK/cases/
    script: str
    args: tuple[str, ...] = ()  # the script's own command line
    autofix_steps: int | None = None  # autofix --max-steps (None: autofix's default)
    steps_flag: str | None = None  # the script's own step limit, lowered by --max-steps
    healthy_fixes: tuple[str, ...] = ()  # recipes a user expects on the published script


_TRAINER_COMMON = ("--do_train", "--do_eval", "--per_device_train_batch_size", "8",
                   "--output_dir", "out", "--report_to", "none", "--save_strategy", "no")

CASES = {c.name: c for c in (
    Case("run_glue", "glue", "run_glue.py", (
        "--model_name_or_path", "minilm", "--train_file", "data/cls_train.csv",
        "--validation_file", "data/cls_validation.csv", *_TRAINER_COMMON,
        "--max_seq_length", "32", "--max_steps", "40", "--logging_steps", "10"),
        steps_flag="--max_steps"),
    Case("run_glue_no_trainer", "no_trainer", "run_glue_no_trainer.py", (
        "--model_name_or_path", "minilm", "--train_file", "data/cls_train.csv",
        "--validation_file", "data/cls_validation.csv", "--max_length", "32",
        "--per_device_train_batch_size", "8", "--max_train_steps", "40", "--output_dir", "out"),
        steps_flag="--max_train_steps"),
    Case("run_ner", "ner", "run_ner.py", (
        "--model_name_or_path", "minilm", "--train_file", "data/ner_train.json",
        "--validation_file", "data/ner_validation.json", *_TRAINER_COMMON,
        "--max_seq_length", "32", "--max_steps", "20", "--logging_steps", "5"),
        steps_flag="--max_steps"),
    Case("run_clm", "clm", "run_clm.py", (
        "--model_name_or_path", "tiny-gpt2", "--train_file", "data/clm_train.txt",
        "--validation_file", "data/clm_validation.txt", *_TRAINER_COMMON,
        "--block_size", "32", "--learning_rate", "1e-3", "--max_steps", "40",
        "--logging_steps", "5"),
        steps_flag="--max_steps"),
    Case("section3", "section3", "section3.ipynb", autofix_steps=30,
         healthy_fixes=("drift-keyword",)),
    Case("section4", "section4", "section4.ipynb", autofix_steps=30),
)}


# --- the program a check reads: a script, or a notebook's code cells ------------------------


def code_cells(notebook_text: str) -> list[str]:
    nb = json.loads(notebook_text)
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def program(path_name: str, text: str) -> str:
    """The Python a check reads: the script itself, or the notebook's code cells one after
    the other (``# %% cell N`` between them), IPython ``!``/``%`` lines commented out."""
    if not path_name.endswith(".ipynb"):
        return text
    parts = []
    for i, src in enumerate(code_cells(text)):
        lines = [("#" + ln if ln.lstrip().startswith(("!", "%")) else ln)
                 for ln in src.splitlines()]
        parts.append(f"# %% cell {i}\n" + "\n".join(lines) + "\n")
    return "".join(parts)


# --- seeds -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Edit:
    """Replace the ``nth`` occurrence of ``old`` (in the script, or across a notebook's code
    cells) by ``new``; ``old`` must occur exactly ``count`` times."""
    old: str
    new: str
    nth: int = 0
    count: int | None = 1  # None: any number >= nth + 1

    def apply(self, text: str, where: str) -> str:
        found = text.count(self.old)
        if found <= self.nth or (self.count is not None and found != self.count):
            raise SeedError(f"{where}: anchor {self.old!r} found {found} time(s), "
                            f"expected {self.count if self.count is not None else '>=1'}")
        start = -1
        for _ in range(self.nth + 1):
            start = text.index(self.old, start + 1)
        return text[:start] + self.new + text[start + len(self.old):]


def apply_edits(script: str, text: str, edits: Sequence[Edit]) -> str:
    if not script.endswith(".ipynb"):
        for edit in edits:
            text = edit.apply(text, script)
        return text
    nb = json.loads(text)
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    for edit in edits:
        sources = ["".join(c["source"]) for c in cells]
        total = sum(s.count(edit.old) for s in sources)
        if total <= edit.nth or (edit.count is not None and total != edit.count):
            raise SeedError(f"{script}: anchor {edit.old!r} found {total} time(s) in the "
                            f"code cells, expected {edit.count if edit.count else '>=1'}")
        seen = 0
        for cell, src in zip(cells, sources, strict=True):
            k = src.count(edit.old)
            if seen <= edit.nth < seen + k:
                new = Edit(edit.old, edit.new, edit.nth - seen, None).apply(src, script)
                cell["source"] = new.splitlines(keepends=True)
                break
            seen += k
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"  # the kit's own format


# --- checks: did the fix edit the right place? ------------------------------------------------


@dataclass
class Diff:
    """Seeded program -> fixed program, line by line (0-based line indexes)."""
    seeded: list[str]
    fixed: list[str]
    changed_fixed: set[int] = field(default_factory=set)  # lines of `fixed` written by the fix
    changed_seeded: set[int] = field(default_factory=set)  # lines of `seeded` it replaced

    @classmethod
    def of(cls, seeded: str, fixed: str) -> Diff:
        a, b = seeded.splitlines(), fixed.splitlines()
        d = cls(a, b)
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False) \
                .get_opcodes():
            if tag == "equal":
                continue
            d.changed_seeded.update(range(i1, i2) if i2 > i1 else {max(i1 - 1, 0), i1})
            d.changed_fixed.update(range(j1, j2) if j2 > j1 else {max(j1 - 1, 0), j1})
        return d


def _parse(lines: list[str]) -> ast.Module | None:
    try:
        return ast.parse("\n".join(lines) + "\n")
    except SyntaxError:
        return None


def _calls(tree: ast.Module, func: str, arg0: str | None) -> list[ast.Call]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == func:
            if arg0 is not None:
                first = node.args[0] if node.args else None
                if not isinstance(first, ast.Constant) or first.value != arg0:
                    continue
            found.append(node)
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def _number(src: str | None) -> float | None:
    try:
        return float(ast.literal_eval(src)) if src is not None else None
    except (ValueError, SyntaxError, TypeError):
        return None


def lr_ok(src: str | None) -> bool:
    """A fine-tuning learning rate (1e-5..1e-4) written as a number."""
    value = _number(src)
    return value is not None and 1e-6 <= value <= 1e-4


def dicts(report: dict[str, object], key: str) -> list[dict[str, object]]:
    """The report's list ``key`` (runs, fixes, findings), its objects only."""
    value = report.get(key)
    return [x for x in value if isinstance(x, dict)] if isinstance(value, list) else []


class Check:
    what = ""
    off_style = ""  # set by a verdict that is right but not in the script's own idiom

    def verdict(self, diff: Diff, report: dict[str, object]) -> tuple[bool, str]:
        raise NotImplementedError


@dataclass
class Kw(Check):
    """The ``nth`` call of ``func`` (first positional argument ``arg0`` if given) was edited
    by the fix and its keywords then satisfy ``ok`` (keyword name -> source; positional
    arguments as ``#0``, ``#1``...)."""
    func: str
    ok: Callable[[dict[str, str]], bool]
    what: str
    nth: int = 0
    arg0: str | None = None
    style: Callable[[dict[str, str]], bool] | None = None  # the script's own idiom

    def verdict(self, diff: Diff, report: dict[str, object]) -> tuple[bool, str]:
        self.off_style = ""
        tree = _parse(diff.fixed)
        if tree is None:
            return False, "fixed program does not parse"
        calls = _calls(tree, self.func, self.arg0)
        if len(calls) <= self.nth:
            return False, f"no {self.func}(...) #{self.nth} in the fixed program"
        call = calls[self.nth]
        span = set(range(call.lineno - 1, (call.end_lineno or call.lineno)))
        text = "\n".join(diff.fixed) + "\n"
        kws = {f"#{i}": ast.get_source_segment(text, a) or "" for i, a in enumerate(call.args)}
        kws.update({k.arg or "**": ast.get_source_segment(text, k.value) or ""
                    for k in call.keywords})
        if not span & diff.changed_fixed:
            return False, f"{self.func}(...) at line {call.lineno} not edited"
        if not self.ok(kws):
            return False, f"{self.func}(...) edited but {self.what} not met: {kws}"
        if self.style is not None and not self.style(kws):
            self.off_style = f"not in the script's style: {kws}"
        return True, f"{self.func}(...) line {call.lineno}"


@dataclass
class Line(Check):
    """The line matching ``seeded`` (regex, ``nth`` match) in the seeded program was
    replaced by lines matching ``fixed``."""
    seeded: str
    fixed: str
    what: str
    nth: int = 0

    def verdict(self, diff: Diff, report: dict[str, object]) -> tuple[bool, str]:
        hits = [i for i, ln in enumerate(diff.seeded) if re.search(self.seeded, ln)]
        if len(hits) <= self.nth:
            return False, f"seeded line /{self.seeded}/ not found"
        i = hits[self.nth]
        if i not in diff.changed_seeded:
            return False, f"line {i + 1} ({diff.seeded[i].strip()}) not edited"
        matcher = difflib.SequenceMatcher(None, diff.seeded, diff.fixed, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "equal" and i1 <= i < max(i2, i1 + 1):
                new = diff.fixed[j1:j2]
                if any(re.search(self.fixed, ln) for ln in new):
                    return True, f"line {i + 1} -> {' / '.join(s.strip() for s in new)}"
                return False, f"line {i + 1} -> {new} (wanted /{self.fixed}/)"
        return False, "no hunk at the seeded line"


@dataclass
class InFunction(Check):
    """The fix edited inside ``def name`` and the function then matches ``pattern``."""
    name: str
    pattern: str
    what: str
    nth: int = 0

    def verdict(self, diff: Diff, report: dict[str, object]) -> tuple[bool, str]:
        tree = _parse(diff.fixed)
        if tree is None:
            return False, "fixed program does not parse"
        defs = sorted((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                       and n.name == self.name), key=lambda n: n.lineno)
        if len(defs) <= self.nth:
            return False, f"no def {self.name} in the fixed program"
        node = defs[self.nth]
        span = set(range(node.lineno - 1, node.end_lineno or node.lineno))
        if not span & diff.changed_fixed:
            return False, f"def {self.name} (line {node.lineno}) not edited"
        body = "\n".join(diff.fixed[node.lineno - 1:node.end_lineno])
        if not re.search(self.pattern, body):
            return False, f"def {self.name} edited but no /{self.pattern}/"
        return True, f"def {self.name} (line {node.lineno})"


@dataclass
class AnyOf(Check):
    options: tuple[Check, ...]
    what: str = "any of"

    def verdict(self, diff: Diff, report: dict[str, object]) -> tuple[bool, str]:
        notes = []
        for option in self.options:
            ok, note = option.verdict(diff, report)
            if ok:
                return True, note
            notes.append(note)
        return False, "; ".join(notes)


@dataclass
class Reported(Check):
    """The value comes from the command line: no source edit can be right. The script must be
    left as it was, a run must be diagnosed as ``category`` (or a finding of that kind made),
    and the report's reason, findings or warnings must name ``needle`` (the flag), not only
    the raw exception text echoed in a run's evidence."""
    needle: str
    category: str
    what: str = "diagnosed and named in the report"

    def verdict(self, diff: Diff, report: dict[str, object]) -> tuple[bool, str]:
        if diff.changed_fixed:
            return False, "the script was edited, the value is on the command line"
        kinds = {str(r.get("category", "")) for r in dicts(report, "runs")}
        kinds |= {str(f.get("kind", "")) for f in dicts(report, "findings")}
        texts = [str(report.get("reason", "")), json.dumps(report.get("findings", [])),
                 json.dumps(report.get("warnings", []))]
        named = any(self.needle in t for t in texts)
        if self.category in kinds and named:
            return True, f"diagnosed {self.category}, report names {self.needle}"
        return False, (f"categories {sorted(k for k in kinds if k) or ['none']}, "
                       f"{self.needle} {'named' if named else 'not named'} in reason/findings")


@dataclass(frozen=True)
class Seed:
    name: str
    case: str
    fault: str  # the course fault (faults.md category it should land in)
    description: str
    check: Check
    edits: tuple[Edit, ...] = ()
    args: Callable[[list[str]], list[str]] | None = None  # a command-line seed
    min_steps: int = 0  # the fault only shows after this many steps (stall verdicts)
    #: Harder data the seed trains on (:data:`HARDER`): the kit's cue-word sets are learned
    #: even at lr 1e-3, so a learning-rate seed would show nothing on them.
    data: str = ""
    #: The script's own step limit for this seed (0: the case's), so that autofix's budget
    #: and its extension, not the script, end the training (stall verdicts need 120 steps).
    script_steps: int = 0
    #: autofix --max-steps for this seed (None: the case's).
    autofix_steps: int | None = None
    #: A fault that may not show on the kit's easy data (lr 1e-3 can still learn it): a
    #: clean session whose loss ends under half the chance level is "inert", not a miss.
    may_be_inert: bool = False


#: Harder data for the learning-rate seeds, made from the project's own MNLI-shaped set
#: (``sample_scripts/data/mnli_mini_*.jsonl``) as ``bench_stall_grid.py`` makes its
#: ``nli4``: the three NLI classes plus a fourth, a hypothesis taken from an unrelated
#: premise. MiniLM-L6 at lr 1e-3 stalls at ln 4 on it (``bench_stall_grid.py --subset
#: detect``); at 5e-5 it learns. Written as the kit's CSV layout (sentence1, sentence2,
#: label, idx) to ``data/nli4_{train,validation,test}.csv``.
HARDER = "nli4"
MNLI = ROOT / "sample_scripts" / "data"


def harder_rows(split: str) -> list[dict[str, object]]:
    """The rows of the :data:`HARDER` set's ``split`` (train, validation), deterministic."""
    import random

    source = MNLI / f"mnli_mini_{'train' if split == 'train' else 'validation'}.jsonl"
    rows = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    rng = random.Random(8 if split == "train" else 9)
    unrelated = []
    for r in rng.sample(rows, len(rows) // 3):
        other = rows[rng.randrange(len(rows))]
        while other["premise"].split()[2:3] == r["premise"].split()[2:3]:
            other = rows[rng.randrange(len(rows))]
        unrelated.append({"premise": r["premise"], "hypothesis": other["hypothesis"], "label": 3})
    out = rows + unrelated
    rng.shuffle(out)
    return out


def write_harder(repo: Path) -> None:
    """``data/nli4_*.csv`` in the case repo ``repo`` (the test split is the validation's)."""
    import csv

    for split, rows in (("train", harder_rows("train")), ("validation", harder_rows("val"))):
        for name in ((split,) if split == "train" else ("validation", "test")):
            with (repo / "data" / f"{HARDER}_{name}.csv").open("w", newline="") as fh:
                out = csv.writer(fh)
                out.writerow(["sentence1", "sentence2", "label", "idx"])
                out.writerows([r["premise"], r["hypothesis"], r["label"], i]
                              for i, r in enumerate(rows))


def _harder_files(argv: list[str]) -> list[str]:
    """The scripts' command line with the :data:`HARDER` files."""
    out = list(argv)
    for flag, split in (("--train_file", "train"), ("--validation_file", "validation")):
        if flag in out:
            out[out.index(flag) + 1] = f"data/{HARDER}_{split}.csv"
    return out


def _every(old: str, new: str, times: int) -> tuple[Edit, ...]:
    """Edits replacing each of the ``times`` occurrences of ``old`` (in order)."""
    return tuple(Edit(old, new, 0, times - i) for i in range(times))


def _set_arg(flag: str, value: str) -> Callable[[list[str]], list[str]]:
    def change(argv: list[str]) -> list[str]:
        out = list(argv)
        if flag in out:
            out[out.index(flag) + 1] = value
        else:
            out += [flag, value]
        return out
    return change


def _literal_int(expected: int) -> Callable[[str | None], bool]:
    """A ``num_labels`` value: the data's class count as a literal, or any expression (the
    script's own variable); the seeded too-small literal is wrong."""
    def ok(src: str | None) -> bool:
        if src is None:
            return expected == 2  # the default head has 2 outputs
        value = _number(src)
        return value == expected if value is not None else True
    return ok


_glue_labels = _literal_int(3)
_ner_labels = _literal_int(5)
_mrpc_labels = _literal_int(2)

SEEDS: tuple[Seed, ...] = (
    # --- too few labels where the script sets them -----------------------------------------
    Seed("glue-num-labels", "run_glue", "label-out-of-range",
         "AutoConfig.from_pretrained(num_labels=num_labels) -> num_labels=2 (3 classes)",
         Kw("AutoConfig.from_pretrained", lambda k: _glue_labels(k.get("num_labels")),
            "num_labels = num_labels / 3"),
         (Edit("        num_labels=num_labels,\n        finetuning_task=",
               "        num_labels=2,\n        finetuning_task="),)),
    Seed("no-trainer-num-labels", "run_glue_no_trainer", "label-out-of-range",
         "AutoConfig.from_pretrained(num_labels=num_labels) -> num_labels=2 (3 classes)",
         Kw("AutoConfig.from_pretrained", lambda k: _glue_labels(k.get("num_labels")),
            "num_labels = num_labels / 3"),
         (Edit("        num_labels=num_labels,\n        finetuning_task=args.task_name,",
               "        num_labels=2,\n        finetuning_task=args.task_name,"),)),
    Seed("ner-num-labels", "run_ner", "label-out-of-range",
         "AutoConfig.from_pretrained(num_labels=num_labels) -> num_labels=2 (5 tags)",
         Kw("AutoConfig.from_pretrained", lambda k: _ner_labels(k.get("num_labels")),
            "num_labels = num_labels / 5"),
         (Edit("        num_labels=num_labels,\n        finetuning_task=",
               "        num_labels=2,\n        finetuning_task="),)),
    Seed("section3-num-labels", "section3", "label-out-of-range",
         "cell 5: from_pretrained(checkpoint, num_labels=2) -> num_labels=1 (a regression "
         "head for 2 classes)",
         Kw("AutoModelForSequenceClassification.from_pretrained",
            lambda k: _mrpc_labels(k.get("num_labels")), "num_labels = 2"),
         (Edit("from_pretrained(checkpoint, num_labels=2)",
               "from_pretrained(checkpoint, num_labels=1)", nth=0, count=2),)),
    Seed("section4-num-labels", "section4", "label-out-of-range",
         "cell 8: from_pretrained(checkpoint, num_labels=2) -> num_labels=1",
         Kw("AutoModelForSequenceClassification.from_pretrained",
            lambda k: _mrpc_labels(k.get("num_labels")), "num_labels = 2"),
         (Edit("from_pretrained(checkpoint, num_labels=2)",
               "from_pretrained(checkpoint, num_labels=1)", nth=0, count=3),)),
    # --- the raw dataset given to the trainer ---------------------------------------------
    Seed("glue-raw-dataset", "run_glue", "raw-dataset",
         "the map result is bound to a new name (`tokenized_datasets = raw_datasets.map(`), "
         "so train/eval datasets and Trainer(train_dataset=train_dataset if ... else None) "
         "get the untokenized CSV rows",
         AnyOf((Line(r"tokenized_datasets = raw_datasets\.map\(",
                     r"raw_datasets = raw_datasets\.map\(", "map result kept"),
                Line(r'train_dataset = raw_datasets\["train"\]',
                     r'train_dataset = tokenized_datasets\["train"\]', "tokenized split"),
                Kw("Trainer", lambda k: "tokenized_datasets" in k.get("train_dataset", ""),
                   "train_dataset tokenized"))),
         (Edit("        raw_datasets = raw_datasets.map(\n            preprocess_function,",
               "        tokenized_datasets = raw_datasets.map(\n            preprocess_function,"),
          )),
    Seed("clm-raw-dataset", "run_clm", "raw-dataset",
         "Trainer(train_dataset=train_dataset if training_args.do_train else None) -> "
         "raw_datasets['train'] if ... else None (text only, no input_ids)",
         Kw("Trainer", lambda k: "raw_datasets" not in k.get("train_dataset", "raw_datasets")
            and " if training_args.do_train else None" in k.get("train_dataset", ""),
            "train_dataset = the grouped/tokenized split, conditional kept"),
         (Edit("train_dataset=train_dataset if training_args.do_train else None",
               'train_dataset=raw_datasets["train"] if training_args.do_train else None'),)),
    Seed("section3-raw-dataset", "section3", "raw-dataset",
         'cell 6: Trainer(train_dataset=tokenized_datasets["train"]) -> raw_datasets["train"]',
         Kw("Trainer", lambda k: k.get("train_dataset") == 'tokenized_datasets["train"]',
            'train_dataset = tokenized_datasets["train"]'),
         (Edit('train_dataset=tokenized_datasets["train"]', 'train_dataset=raw_datasets["train"]',
               nth=0, count=2),)),
    # --- the padding collator removed -----------------------------------------------------
    Seed("no-trainer-collator", "run_glue_no_trainer", "ragged-batch",
         "train DataLoader(..., collate_fn=data_collator, ...) loses collate_fn "
         "(torch's default collate on unpadded rows)",
         Kw("DataLoader", lambda k: k.get("collate_fn") not in (None, "None"),
            "collate_fn given", nth=0, style=lambda k: k.get("collate_fn") == "data_collator"),
         (Edit("train_dataset, shuffle=True, collate_fn=data_collator, batch_size=",
               "train_dataset, shuffle=True, batch_size="),)),
    Seed("section4-collator", "section4", "ragged-batch",
         "cell 6: train DataLoader(..., collate_fn=data_collator) loses collate_fn",
         Kw("DataLoader", lambda k: k.get("collate_fn") not in (None, "None"),
            "collate_fn given", nth=0, style=lambda k: k.get("collate_fn") == "data_collator"),
         (Edit('tokenized_datasets["train"], shuffle=True, batch_size=8, collate_fn=data_collator',
               'tokenized_datasets["train"], shuffle=True, batch_size=8'),)),
    Seed("ner-collator", "run_ner", "ragged-batch",
         "Trainer(..., data_collator=data_collator) loses data_collator: the default padding "
         "collator does not pad the token labels",
         Kw("Trainer", lambda k: "data_collator" in k.get("data_collator", "")
            or "DataCollatorForTokenClassification" in k.get("data_collator", ""),
            "data_collator = the token-classification collator"),
         (Edit("        processing_class=tokenizer,\n        data_collator=data_collator,\n"
               "        compute_metrics=compute_metrics,",
               "        processing_class=tokenizer,\n        compute_metrics=compute_metrics,"),
          )),
    # --- a learning rate of 1e-3 on the pretrained MiniLM ---------------------------------
    Seed("no-trainer-lr", "run_glue_no_trainer", "lr-too-high",
         "argparse --learning_rate default=5e-5 -> default=1e-3 (the command line sets none), "
         "on the harder 4-class set",
         Kw("parser.add_argument", lambda k: lr_ok(k.get("default")),
            "default in 1e-5..1e-4", arg0="--learning_rate"),
         (Edit('"--learning_rate",\n        type=float,\n        default=5e-5,',
               '"--learning_rate",\n        type=float,\n        default=1e-3,'),),
         min_steps=60, may_be_inert=True, data=HARDER, script_steps=300),
    Seed("glue-lr-cli", "run_glue", "lr-too-high",
         "command line --learning_rate 1e-3 (TrainingArguments come from the command line: "
         "the fix is the flag, not the source), on the harder 4-class set",
         Reported("--learning_rate", "lr-too-high"), args=_set_arg("--learning_rate", "1e-3"),
         min_steps=60, may_be_inert=True, data=HARDER, script_steps=300),
    Seed("section3-lr", "section3", "lr-too-high",
         'cell 4: TrainingArguments("test-trainer") -> TrainingArguments("test-trainer", '
         "learning_rate=1e-3), on the harder 4-class set (num_labels=4)",
         Kw("TrainingArguments", lambda k: "learning_rate" not in k or lr_ok(k["learning_rate"]),
            "learning_rate in 1e-5..1e-4", nth=0),
         (Edit('training_args = TrainingArguments("test-trainer")',
               'training_args = TrainingArguments("test-trainer", learning_rate=1e-3)'),
          *_every("data/mrpc_", f"data/{HARDER}_", 3), *_every("num_labels=2", "num_labels=4", 2)),
         min_steps=60, may_be_inert=True, data=HARDER, autofix_steps=60),
    Seed("section4-lr", "section4", "lr-too-high",
         "cell 10: AdamW(model.parameters(), lr=5e-5) -> lr=1e-3, on the harder 4-class set "
         "(num_labels=4)",
         Kw("AdamW", lambda k: lr_ok(k.get("lr")), "lr in 1e-5..1e-4", nth=0),
         (Edit("optimizer = AdamW(model.parameters(), lr=5e-5)",
               "optimizer = AdamW(model.parameters(), lr=1e-3)"),
          *_every("data/mrpc_", f"data/{HARDER}_", 3), *_every("num_labels=2", "num_labels=4", 3)),
         min_steps=60, may_be_inert=True, data=HARDER, autofix_steps=60),
    # --- the metric on logits -------------------------------------------------------------
    Seed("glue-metric-logits", "run_glue", "metric-on-logits",
         "compute_metrics: `np.squeeze(preds) if is_regression else np.argmax(preds, axis=1)` "
         "loses the argmax",
         Line(r"preds = np\.squeeze\(preds\) if is_regression else preds$",
              r"if is_regression else np\.argmax\(preds", "argmax in the else branch (the "
              "regression branch keeps its squeeze)"),
         (Edit("        preds = np.squeeze(preds) if is_regression else np.argmax(preds, axis=1)",
               "        preds = np.squeeze(preds) if is_regression else preds"),)),
    Seed("ner-metric-logits", "run_ner", "metric-on-logits",
         "compute_metrics: the line `predictions = np.argmax(predictions, axis=2)` removed",
         InFunction("compute_metrics", r"argmax\(predictions", "argmax in compute_metrics"),
         (Edit("        predictions = np.argmax(predictions, axis=2)\n", "", nth=0, count=2),)),
    Seed("no-trainer-metric-logits", "run_glue_no_trainer", "metric-on-logits",
         "eval loop: `outputs.logits.argmax(dim=-1) if not is_regression else ...` loses "
         ".argmax(dim=-1)",
         Line(r"predictions = outputs\.logits if not is_regression", r"argmax",
              "argmax restored on that line"),
         (Edit("predictions = outputs.logits.argmax(dim=-1) if not is_regression",
               "predictions = outputs.logits if not is_regression"),)),
    Seed("section3-metric-logits", "section3", "metric-on-logits",
         "cell 11: compute_metrics's `predictions = np.argmax(logits, axis=-1)` -> "
         "`predictions = logits` (used by the second Trainer, cell 12)",
         InFunction("compute_metrics", r"argmax\(logits", "argmax in compute_metrics"),
         (Edit("    predictions = np.argmax(logits, axis=-1)\n", "    predictions = logits\n"),)),
    Seed("section4-metric-logits", "section4", "metric-on-logits",
         "cell 14: `predictions = torch.argmax(logits, dim=-1)` -> `predictions = logits` "
         "(the eval loop after the first training loop)",
         Line(r"^\s*predictions = logits$", r"argmax", "argmax restored on that line"),
         (Edit("    predictions = torch.argmax(logits, dim=-1)\n", "    predictions = logits\n"),)),
    # --- a removed / renamed argument (api drift) -----------------------------------------
    Seed("glue-drift-tokenizer", "run_glue", "api-drift",
         "Trainer(processing_class=tokenizer) -> tokenizer=tokenizer (removed in v5)",
         Kw("Trainer", lambda k: k.get("processing_class") == "tokenizer" and "tokenizer" not in k,
            "processing_class=tokenizer"),
         (Edit("        compute_metrics=compute_metrics,\n        processing_class=tokenizer,",
               "        compute_metrics=compute_metrics,\n        tokenizer=tokenizer,"),)),
    Seed("clm-drift-tokenizer", "run_clm", "api-drift",
         "Trainer(processing_class=tokenizer) -> tokenizer=tokenizer (removed in v5)",
         Kw("Trainer", lambda k: k.get("processing_class") == "tokenizer" and "tokenizer" not in k,
            "processing_class=tokenizer"),
         (Edit("        processing_class=tokenizer,\n        # Data collator",
               "        tokenizer=tokenizer,\n        # Data collator"),)),
    Seed("section4-drift-adamw", "section4", "api-drift",
         "cell 10: `from torch.optim import AdamW` -> `from transformers import AdamW` "
         "(removed from transformers)",
         Line(r"^from transformers import AdamW$", r"^from torch\.optim import AdamW$",
              "AdamW imported from torch.optim"),
         (Edit("from torch.optim import AdamW\n\noptimizer = AdamW(model.parameters(), lr=5e-5)",
               "from transformers import AdamW\n\noptimizer = AdamW(model.parameters(), lr=5e-5)"),
          )),
    Seed("ner-drift-cli-eval-strategy", "run_ner", "api-drift",
         "command line --evaluation_strategy steps (renamed --eval_strategy)",
         Reported("--evaluation_strategy", "api-drift"),
         args=_set_arg("--evaluation_strategy", "steps")),
)
SEED_NAMES = {s.name: s for s in SEEDS}


# --- running -----------------------------------------------------------------------------------


def build(realworld: Path, work: Path) -> Path:
    """The kit's case repos under ``work/cases`` (built once)."""
    cases = work / "cases"
    if all((cases / c.folder / c.script).exists() for c in CASES.values()):
        return cases
    setup = realworld / "setup.sh"
    if not setup.exists():
        raise SystemExit(f"no kit at {realworld} (give --realworld)")
    done = subprocess.run(["bash", str(setup), str(work)], env={**os.environ,
                          "PY": sys.executable, **RUN_ENV}, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{setup} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return cases


def published(realworld: Path, case: Case) -> str:
    """The case's script as the kit publishes it (a notebook as the kit's ``edit_nb.py``
    turns it into the runnable one: local CSVs and checkpoint)."""
    source = realworld / "scripts" / case.script
    if not case.script.endswith(".ipynb"):
        return source.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / case.script
        subprocess.run([sys.executable, str(realworld / "kit" / "edit_nb.py"), str(source),
                        str(out), case.folder], check=True, capture_output=True)
        return out.read_text(encoding="utf-8")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}).stdout


def steps_args(case: Case, argv: list[str], max_steps: int | None) -> tuple[list[str], list[str]]:
    """(script argv, autofix step options) for a ``--max-steps`` override: the script's own
    limit is lowered to N (its training ends by itself, then it evaluates as published) and
    autofix's budget is set just above it."""
    if max_steps is None:
        return argv, ([] if case.autofix_steps is None else ["--max-steps",
                                                               str(case.autofix_steps)])
    if case.steps_flag and case.steps_flag in argv:
        out = list(argv)
        i = out.index(case.steps_flag) + 1
        out[i] = str(min(int(out[i]), max_steps))
        return out, ["--max-steps", str(max_steps + 1)]
    return argv, ["--max-steps", str(max_steps)]


def session(cases: Path, work: Path, case: Case, seed: Seed | None,
            max_steps: int | None, timeout: int) -> dict[str, object]:
    name = f"{case.name}-{seed.name if seed else 'healthy'}"
    repo = work / "sessions" / name
    if repo.exists():
        shutil.rmtree(repo)
    shutil.copytree(cases / case.folder, repo, symlinks=True)
    path = repo / case.script
    argv = list(case.args)
    if seed is not None:
        text = path.read_text(encoding="utf-8")
        if seed.data:
            write_harder(repo)
            git(repo, "add", "data")
            argv = _harder_files(argv)
        if seed.edits:
            path.write_text(apply_edits(case.script, text, seed.edits), encoding="utf-8")
        if seed.edits or seed.data:
            git(repo, "commit", "-qam", f"seed: {seed.name}")
        if seed.args is not None:
            argv = seed.args(argv)
        if seed.script_steps and case.steps_flag and case.steps_flag in argv:
            argv[argv.index(case.steps_flag) + 1] = str(seed.script_steps)
    if seed is not None and seed.min_steps and max_steps is not None:
        max_steps = max(max_steps, seed.min_steps)
    if seed is not None and seed.autofix_steps is not None and max_steps is None:
        case = dataclasses.replace(case, autofix_steps=seed.autofix_steps)
    argv, step_opts = steps_args(case, argv, max_steps)
    base = git(repo, "rev-parse", "HEAD").strip()
    seeded_text = path.read_text(encoding="utf-8")
    report_path = repo / "r.json"
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [*AUTOFIX, case.script, "--branch", "fixes", "--report", str(report_path),
             "--timeout", str(timeout), *step_opts, "--", *argv],
            cwd=repo, capture_output=True, text=True, stdin=subprocess.DEVNULL,
            env={**os.environ, **RUN_ENV}, timeout=timeout * 3 + 120)
        rc, tail = proc.returncode, (proc.stdout + proc.stderr)[-2000:]
    except subprocess.TimeoutExpired:
        rc, tail = -9, "benchmark timeout"
    seconds = time.perf_counter() - start
    (repo / "autofix.log").write_text(tail)
    (repo / "bench.json").write_text(json.dumps({"rc": rc, "seconds": seconds, "base": base,
                                                 "seeded": seeded_text}))
    return evaluate(case, seed, repo)


def evaluate(case: Case, seed: Seed | None, repo: Path) -> dict[str, object]:
    """The row of one finished session (``repo``: its case repo, with ``bench.json``,
    ``r.json`` and the ``fixes`` branch): also what ``--recheck`` calls."""
    saved = json.loads((repo / "bench.json").read_text())
    rc, seconds, base = int(saved["rc"]), float(saved["seconds"]), str(saved["base"])
    seeded_text = str(saved["seeded"])
    tail = (repo / "autofix.log").read_text() if (repo / "autofix.log").exists() else ""
    report_path = repo / "r.json"
    report: dict[str, object] = {}
    if report_path.exists():
        report = json.loads(report_path.read_text())
    has_branch = subprocess.run(["git", "rev-parse", "--verify", "-q", "fixes"], cwd=repo,
                                capture_output=True).returncode == 0
    fixed_text = git(repo, "show", f"fixes:{case.script}") if has_branch else seeded_text
    runs, fixes, findings = (dicts(report, k) for k in ("runs", "fixes", "findings"))
    last = runs[-1] if runs else {}
    trains = rc == 0 and last.get("outcome") in ("ok", "budget")
    row: dict[str, object] = {
        "case": case.name, "seed": seed.name if seed else "healthy",
        "fault": seed.fault if seed else "", "rc": rc,
        "status": report.get("status", "no report"), "reason": report.get("reason", tail[-300:]),
        "runs": len(runs), "seconds": round(seconds, 1), "trains": trains,
        "fixes": [f"{f.get('recipe')}@{f.get('file')}:{f.get('line')}" for f in fixes],
        "fix_summaries": [str(f.get("summary", "")) for f in fixes],
        "findings": [str(f.get("kind", "")) + ": " + str(f.get("evidence", ""))[:160]
                     for f in findings],
        "run_outcomes": [f"{r.get('outcome')}:{r.get('category') or '-'}" for r in runs],
        "base": base, "repo": str(repo),
    }
    if seed is None:
        recipes = tuple(str(f.get("recipe")) for f in fixes)
        row["clean"] = trains and recipes == case.healthy_fixes and not findings
        row["healthy_findings"] = len(findings) + len(set(recipes) - set(case.healthy_fixes))
        return row
    diff = Diff.of(program(case.script, seeded_text), program(case.script, fixed_text))
    right, note = seed.check.verdict(diff, report)
    if isinstance(seed.check, Reported):
        row["fixed"] = None
    else:
        row["fixed"] = trains and report.get("status") == "fixed"
        right = right and bool(row["fixed"])
    row["inert"] = bool(seed.may_be_inert and not right and report.get("status") == "clean"
                        and trains and _final_ratio(last) <= INERT_RATIO)
    if row["inert"]:
        note = (f"inert: the run learned anyway (last 10 steps at {_final_ratio(last):.2f} x "
                f"chance); {note}")
    row["right_place"] = right
    row["check"] = note + (f" ({seed.check.off_style})" if right and seed.check.off_style
                           else "")
    row["in_style"] = bool(right and not seed.check.off_style)
    return row


#: A clean run whose last 10 steps average at most this x the chance loss learned plainly.
INERT_RATIO = 0.5


def _final_ratio(run: dict[str, object]) -> float:
    """Mean loss of a run's last 10 steps over its chance loss (inf when unknown)."""
    steps = run.get("steps")
    chance = run.get("chance_loss")
    losses = [float(s["loss"]) for s in steps if isinstance(s, dict)
              and isinstance(s.get("loss"), (int, float))] if isinstance(steps, list) else []
    if not losses or not isinstance(chance, (int, float)) or chance <= 0:
        return float("inf")
    tail = losses[-10:]
    return sum(tail) / len(tail) / float(chance)


def table(rows: list[dict[str, object]]) -> str:
    out = [f"{'case':20} {'seed':28} {'rc':>3} {'status':8} {'runs':>4} {'trains':6} "
           f"{'right':5} {'wall':>6}  fixes / findings"]
    for r in rows:
        right = "-" if r["seed"] == "healthy" else ("yes" if r.get("right_place") else
                                                     "inert" if r.get("inert") else "NO")
        if r["seed"] == "healthy":
            right = "clean" if r.get("clean") else "NO"
        extra = ", ".join([*map(str, r["fixes"]), *map(str, r["findings"])])  # type: ignore[call-overload]
        out.append(f"{r['case']:20} {r['seed']:28} {r['rc']!s:>3} {r['status']!s:8} "
                   f"{r['runs']!s:>4} {'yes' if r['trains'] else 'no':6} {right:5} "
                   f"{r['seconds']!s:>6}  {extra[:110]}")
        if r["seed"] != "healthy":
            out.append(f"{'':20} check: {r.get('check')}")
    return "\n".join(out)


def totals(rows: list[dict[str, object]]) -> str:
    healthy = [r for r in rows if r["seed"] == "healthy"]
    seeded = [r for r in rows if r["seed"] != "healthy"]
    inert = [r for r in seeded if r.get("inert")]
    source = [r for r in seeded if r.get("fixed") is not None and not r.get("inert")]
    cli = [r for r in seeded if r.get("fixed") is None and not r.get("inert")]
    runs = sum(int(str(r["runs"])) for r in rows)
    wall = sum(float(str(r["seconds"])) for r in rows)
    lines = [
        f"sessions: {len(rows)}, autofix runs: {runs}, wall: {wall:.0f} s "
        f"({wall / max(len(rows), 1):.0f} s per session)",
        f"healthy: clean {sum(1 for r in healthy if r.get('clean'))}/{len(healthy)}, "
        f"findings on healthy runs: {sum(int(str(r['healthy_findings'])) for r in healthy)} "
        "(target 0)",
        f"seeded (source): fixed {sum(1 for r in source if r.get('fixed'))}/{len(source)}, "
        f"at the right place {sum(1 for r in source if r.get('right_place'))}/{len(source)} "
        f"(in the script's own idiom {sum(1 for r in source if r.get('in_style'))})",
        f"seeded (command line): reported {sum(1 for r in cli if r.get('right_place'))}"
        f"/{len(cli)}",
        f"seeds inert on the kit's data (clean, the loss fell anyway; not counted): "
        f"{len(inert)}{' (' + ', '.join(str(r['seed']) for r in inert) + ')' if inert else ''}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--realworld", type=Path, default=DEFAULT_REALWORLD,
                        help="the kit folder (scripts/, kit/, setup.sh)")
    parser.add_argument("--work", type=Path, default=None,
                        help="work folder (default: a new temporary folder, kept)")
    parser.add_argument("--only", nargs="+", default=[], metavar="NAME",
                        help=f"only these cases: {', '.join(CASES)}")
    parser.add_argument("--seeds", nargs="+", default=None, metavar="SEED",
                        help="only these seeds ('none': healthy runs only); default all")
    parser.add_argument("--no-healthy", action="store_true", help="skip the healthy runs")
    parser.add_argument("--max-steps", type=int, default=None,
                        help="lower every script's step limit to N (default: the kit's "
                             "command lines; stall seeds keep their minimum)")
    parser.add_argument("--timeout", type=int, default=600, help="autofix --timeout per run")
    parser.add_argument("--json", type=Path, default=None, help="write the rows here")
    parser.add_argument("--list", action="store_true", help="list the seeds and exit")
    parser.add_argument("--recheck", action="store_true",
                        help="no runs: judge the sessions already in --work again (after "
                             "changing a check)")
    args = parser.parse_args(argv)

    unknown = [n for n in args.only if n not in CASES]
    seeds_wanted = args.seeds if args.seeds is not None else [s.name for s in SEEDS]
    if seeds_wanted == ["none"]:
        seeds_wanted = []
    unknown += [n for n in seeds_wanted if n not in SEED_NAMES]
    if unknown:
        parser.error(f"unknown case/seed: {', '.join(unknown)}")
    if args.list:  # also checks every anchor against the kit's published scripts
        for s in SEEDS:
            script = CASES[s.case].script
            if s.edits:
                apply_edits(script, published(args.realworld, CASES[s.case]), s.edits)
            print(f"{s.name:28} {s.case:20} {s.fault:18} {s.description}")
        return 0
    if args.recheck and args.work is None:
        parser.error("--recheck needs --work")
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-realworld-"))
    work.mkdir(parents=True, exist_ok=True)
    cases = build(args.realworld.resolve(), work.resolve())
    print(f"work folder: {work}", flush=True)

    todo: list[tuple[Case, Seed | None]] = []
    for case in CASES.values():
        if args.only and case.name not in args.only:
            continue
        if not args.no_healthy:
            todo.append((case, None))
        todo += [(case, s) for s in SEEDS if s.case == case.name and s.name in seeds_wanted]
    # anchors are checked before any run: a stale seed fails the benchmark at once
    for case, seed in todo:
        if seed is not None and seed.edits:
            apply_edits(case.script, (cases / case.folder / case.script).read_text(), seed.edits)

    rows = []
    for case, seed in todo:
        if args.recheck:
            repo = work.resolve() / "sessions" / f"{case.name}-{seed.name if seed else 'healthy'}"
            if not (repo / "bench.json").exists():
                continue
            row = evaluate(case, seed, repo)
        else:
            row = session(cases, work.resolve(), case, seed, args.max_steps, args.timeout)
        rows.append(row)
        print(table([row]).split("\n", 1)[1], flush=True)
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1))
    print()
    print(table(rows))
    print()
    print(totals(rows))
    ok = all(r.get("clean") if r["seed"] == "healthy" else r.get("right_place") or r.get("inert")
             for r in rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
