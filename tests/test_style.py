"""Edits keep the file's style: sorted import lines stay sorted, a call an edit grows past
the file's line length is wrapped the way the file wraps its calls (issue 11, item 7)."""

from __future__ import annotations

from autofix.toolkit import apply_recipe
from autofix.toolkit.discovery import all_recipes
from autofix.toolkit.style import keep_style, line_limit
from autofix.types import RecipeStatus

RECIPES = {r.id: r for r in all_recipes()}
LONG = '"sentence-transformers/all-MiniLM-L6-v2-with-a-long-local-name"'


def _apply(recipe_id: str, source: str) -> str:
    recipe = RECIPES[recipe_id]
    example = next(e for e in recipe.examples if e.after is not None)
    outcome = apply_recipe(recipe, source, example.context(recipe.category))
    assert outcome.status is RecipeStatus.APPLIED, outcome.reason
    return outcome.source


def test_added_import_name_keeps_a_sorted_line_sorted() -> None:
    source = ("from torch.optim import SGD, lr_scheduler\n"
              "from transformers import AdamW, AutoModel\n"
              "opt = AdamW(params)\n")
    after = _apply("drift-adamw", source)
    assert "from torch.optim import AdamW, SGD, lr_scheduler\n" in after
    assert "from transformers import AutoModel\n" in after


def test_added_import_name_goes_last_on_an_unsorted_line() -> None:
    before = "from transformers import Trainer, AutoTokenizer\nx = 1\n"
    after = "from transformers import DataCollatorWithPadding, Trainer, AutoTokenizer\nx = 1\n"
    assert keep_style(before, after) == (
        "from transformers import Trainer, AutoTokenizer, DataCollatorWithPadding\nx = 1\n")


def test_swapped_import_name_keeps_a_sorted_line_sorted() -> None:
    """A recipe swapping ``DataCollatorWithPadding`` for ``DataCollatorForLanguageModeling``
    (cases-t3 t3_08) on a sorted, parenthesized line: sorted again, the layout kept."""
    before = ("from transformers import (AutoTokenizer, DataCollatorWithPadding, Trainer,\n"
              "                          TrainingArguments)\n")
    after = ("from transformers import (DataCollatorForLanguageModeling, AutoTokenizer, Trainer,\n"
             "                          TrainingArguments)\n")
    assert keep_style(before, after) == (
        "from transformers import (AutoTokenizer, DataCollatorForLanguageModeling, Trainer,\n"
        "                          TrainingArguments)\n")
    unsorted = "from transformers import Trainer, DataCollatorWithPadding\n"
    swapped = "from transformers import Trainer, DataCollatorForLanguageModeling\n"
    assert keep_style(unsorted, swapped) == swapped  # an unsorted line: the new name in place


def test_grown_continuation_line_of_an_aligned_call_is_flowed_again() -> None:
    """An argument appended to the last line of a call continued with aligned lines (the
    ``preprocess_logits_for_metrics=`` of cases-t3 t3_09): that line is broken where it
    passes the limit, aligned with the parenthesis; the user's own break stays."""
    first = "    trainer = Trainer(model=model, args=args, train_dataset=ds['train'],"
    before = (f"def main():\n{first}\n"
              "                      data_collator=collator, compute_metrics=compute_metrics)\n")
    after = (f"def main():\n{first}\n"
             "                      data_collator=collator, compute_metrics=compute_metrics, "
             "preprocess_logits_for_metrics=logits_only)\n")
    assert keep_style(before, after) == (
        f"def main():\n{first}\n"
        "                      data_collator=collator, compute_metrics=compute_metrics,\n"
        "                      preprocess_logits_for_metrics=logits_only)\n")


def test_grown_call_is_wrapped_black_style_by_default() -> None:
    source = ("from transformers import AutoModelForSequenceClassification\n"
              f"model = AutoModelForSequenceClassification.from_pretrained({LONG})\n")
    assert line_limit(source) == len(source.splitlines()[1]) > 88
    after = _apply("label-out-of-range", source)
    assert after == ("from transformers import AutoModelForSequenceClassification\n"
                     "model = AutoModelForSequenceClassification.from_pretrained(\n"
                     f"    {LONG},\n"
                     "    num_labels=3,\n"
                     ")\n")
    assert max(len(line) for line in after.splitlines()) <= line_limit(source)


def test_grown_call_follows_the_files_aligned_continuation_style() -> None:
    source = ("from transformers import AutoModelForSequenceClassification, TrainingArguments\n"
              "args = TrainingArguments('out',\n"
              "                         learning_rate=5e-5)\n"
              f"model = AutoModelForSequenceClassification.from_pretrained({LONG})\n")
    after = _apply("label-out-of-range", source)
    lines = after.splitlines()
    assert lines[3] == f"model = AutoModelForSequenceClassification.from_pretrained({LONG},"
    assert lines[4] == " " * len("model = AutoModelForSequenceClassification.from_pretrained(") \
        + "num_labels=3)"
    assert lines[1:3] == source.splitlines()[1:3]  # untouched lines keep their layout


def test_short_lines_are_left_alone() -> None:
    before = "model = M.from_pretrained(ckpt)\n"
    after = "model = M.from_pretrained(ckpt, num_labels=3)\n"
    assert keep_style(before, after) == after


def test_aligned_call_whose_first_line_grew_is_flowed_again() -> None:
    before = ('lora = LoraConfig(r=8, lora_alpha=16, lora_dropout=0.05, target_modules=["c"],\n'
              '                  task_type="CAUSAL_LM")\n')
    after = before.replace('["c"]', '["q_proj", "k_proj", "v_proj", "o_proj"]')
    assert keep_style(before, after) == (
        "lora = LoraConfig(r=8, lora_alpha=16, lora_dropout=0.05,\n"
        '                  target_modules=["q_proj", "k_proj", "v_proj", "o_proj"],\n'
        '                  task_type="CAUSAL_LM")\n')


def test_aligned_call_whose_callee_was_renamed_is_realigned() -> None:
    """drift-args-class swaps TrainingArguments( for a shorter or longer class: the
    continuation lines follow the parenthesis (and flow again where one grows too long);
    a call whose continuation lines were not aligned with the old parenthesis is left."""
    source = ("from transformers import Seq2SeqTrainer, TrainingArguments\n"
              "args = TrainingArguments(output_dir='out', max_steps=3,\n"
              "                         per_device_train_batch_size=8, learning_rate=1e-3,\n"
              "                         logging_steps=1, report_to='none')\n"
              "trainer = Seq2SeqTrainer(model=model, args=args)\n")
    after = _apply("drift-args-class", source)
    assert after == ("from transformers import Seq2SeqTrainer, Seq2SeqTrainingArguments\n"
                     "args = Seq2SeqTrainingArguments(output_dir='out', max_steps=3,\n"
                     "                                per_device_train_batch_size=8, "
                     "learning_rate=1e-3,\n"
                     "                                logging_steps=1, report_to='none')\n"
                     "trainer = Seq2SeqTrainer(model=model, args=args)\n")
    shorter = source.replace("TrainingArguments(", "Arguments(")
    assert keep_style(source, shorter).splitlines()[2] == \
        "                 per_device_train_batch_size=8, learning_rate=1e-3,"
    hanging = source.replace("                         ", "    ")  # not aligned: kept
    assert keep_style(hanging, hanging.replace("TrainingArguments(", "Arguments(")) == \
        hanging.replace("TrainingArguments(", "Arguments(")
