"""The mutation benchmark's declarations: which faults are seeded, where, and what autofix is
expected to name for each.

- :data:`EXPECTED`: the one table of expected category ids, per mutation kind. Some ids
  name categories that are being added to autofix (``--list`` marks those it does not
  know yet); rename them here when the categories land.
- :data:`KINDS`: one :class:`Kind` per mutation kind: its id, the verdict a plain run of a
  mutant must give (``crash``: an exception; ``silent``: exit 0 with a metric), the class
  of the published taxonomy of real deep-learning faults it belongs to (Humbatova et al.,
  "Taxonomy of Real Faults in Deep Learning Systems", ICSE 2020; see docs/taxonomy.md), a
  one-line description, and its sites: the healthy scripts of
  ``sample_scripts/mutations/manifest.toml`` it is seeded into, each with the file and the
  operator (``mutation_ops``) that makes the edit as people make it.
- :func:`mutants`: every (kind, site) pair as a :class:`Mutant` with its mutated sources.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Literal

import libcst as cst
import tomllib
from mutation_ops import (
    AnchorError,
    Decorate,
    DropStatement,
    InsertAfter,
    MoveStatement,
    Operator,
    Replace,
    ReplaceStatement,
    Seq,
    SetArg,
    WrapWith,
    mutate,
)

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_scripts" / "mutations"
STYLES = ("trainer", "functions", "project", "flat")
KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

#: Per mutation kind, the category ids a session must name to count as a detection (any
#: of them), and the only ones its kept commits may carry.
EXPECTED: dict[str, tuple[str, ...]] = {
    # contracts of calls (the mutant crashes)
    "labels-2d-column": ("loss-target-shape",),
    "token-ids-float": ("float-token-ids",),
    "class-ids-float": ("class-ids-as-floats",),
    "features-float64": ("input-dtype-mismatch",),
    "batchnorm-last-row": ("batch-norm-single-row",),
    "num-labels-too-small": ("label-out-of-range",),
    "head-in-features-768": ("layer-size-mismatch",),
    "loss-reduction-none": ("non-scalar-backward",),
    "loss-on-output-object": ("model-output-not-tensor",),
    "item-not-squeezed": ("extra-batch-dimension",),
    "padding-dropped": ("ragged-batch",),
    "raw-dataset-passed": ("raw-dataset",),
    "train-step-no-grad": ("no-grad-training",),
    "class-weights-float64": ("class-weights-dtype",),
    "label-column-renamed": ("label-column-name", "label-column-unnamed"),
    "string-labels-unencoded": ("string-labels",),
    "metric-argmax-dropped": ("metric-on-logits",),
    # invariants of training and evaluation (the mutant trains to the end)
    "zero-grad-dropped": ("zero-grad-missing",),
    "zero-grad-after-backward": ("zero-grad-before-step",),
    "eval-mode-dropped": ("eval-without-eval-mode",),
    "eval-loader-shuffled": ("eval-loader-shuffled",),
    "step-lr-per-batch": ("scheduler-stepped-per-batch",),
    "warmup-per-epoch": ("scheduler-stepped-per-epoch",),
    "lr-times-1000": ("diverging-lr", "lr-too-high"),
    "stats-before-split": ("stats-before-split",),
    "metric-flat-argmax": ("metric-on-flat-argmax",),
    "val-own-encoding": ("label-encoding-mismatch",),
    "softmax-before-ce": ("probabilities-to-logit-loss",),
    "pad-is-eos": ("labels-masked-beyond-padding", "pad-token-is-eos"),
}


@dataclass(frozen=True)
class Site:
    """Where a kind is seeded: the healthy script ``script`` (a manifest id), the file of its
    copy that is edited (``""``: the script itself), and the edit."""

    script: str
    op: Operator
    file: str = ""
    note: str = ""


@dataclass(frozen=True)
class Kind:
    id: str
    verdict: Literal["crash", "silent"]
    taxonomy: str
    description: str
    sites: tuple[Site, ...]
    #: why the kind has fewer than three styles, when it does
    styles_note: str = ""

    @property
    def expected(self) -> tuple[str, ...]:
        return EXPECTED[self.id]


@dataclass(frozen=True)
class Healthy:
    """One healthy original of the manifest."""

    id: str
    style: str
    script: str
    copy: tuple[str, ...]
    description: str
    metric: str = r"val acc (\d+(?:\.\d+)?)"
    #: the script reads the tiny Llama from $AUTOFIX_TINY_LLM_BASE
    tiny_llm: bool = False


@dataclass(frozen=True)
class Mutant:
    id: str
    kind: Kind
    healthy: Healthy
    site: Site
    #: path (relative to sample_scripts/mutations) -> mutated source
    sources: dict[str, str] = field(hash=False, compare=False)

    @property
    def file(self) -> str:
        return self.site.file or self.healthy.script


@cache
def healthy_scripts() -> dict[str, Healthy]:
    """The manifest's healthy originals by id."""
    doc = tomllib.loads((SAMPLES / "manifest.toml").read_text(encoding="utf-8"))
    return {s["id"]: Healthy(s["id"], s["style"], s["script"], tuple(s["copy"]),
                             s["description"], s.get("metric", Healthy.metric),
                             bool(s.get("tiny_llm", False))) for s in doc["script"]}


RENAME_LABEL = 'tokenized = tokenized.rename_column("label", "intent")'


def _lr(script: str, callee: str, value: str, keyword: str = "lr") -> Site:
    return Site(script, SetArg(callee, keyword, value))


def _drop_zero_grad(script: str, call: str = "optimizer.zero_grad()", file: str = "") -> Site:
    return Site(script, DropStatement(call), file)


def _eval_mode(script: str, call: str = "model.eval()", file: str = "") -> Site:
    return Site(script, DropStatement(call), file)


CRASHES: tuple[Kind, ...] = (
    Kind("labels-2d-column", "crash",
         "Tensors and Inputs > Wrong Tensor Shape",
         "class ids made a 2-D column (df[['label']], reshape(-1, 1), y[:, None])",
         (Site("trainer_weighted", Replace('df["label"].tolist()',
                                           'df[["label"]].values.tolist()')),
          Site("trainer_dataset_class", Replace('torch.tensor(row["label"], dtype=torch.long)',
                                                'torch.tensor([row["label"]], dtype=torch.long)')),
          Site("trainer_features", Replace("torch.tensor(self.labels[i], dtype=torch.long)",
                                           "torch.tensor([self.labels[i]], dtype=torch.long)")),
          Site("loop_encoder", Replace('torch.tensor(df["label"].values)',
                                       'torch.tensor(df[["label"]].values)')),
          Site("loop_features", Replace("torch.tensor(y_train, dtype=torch.long)",
                                        "torch.tensor(y_train.reshape(-1, 1), dtype=torch.long)")),
          Site("project_encoder", Replace("torch.tensor(labels, dtype=torch.long)",
                                          "torch.tensor(labels, dtype=torch.long)[:, None]"),
               "project_encoder/data.py"),
          Site("flat_features", Replace("torch.tensor(y_train, dtype=torch.long)",
                                        "torch.tensor(y_train[:, None], dtype=torch.long)")))),
    Kind("token-ids-float", "crash",
         "Tensors and Inputs > Wrong Input > Wrong Type of Input Data",
         "token ids made as floats (a numpy array without dtype, torch.FloatTensor, .float())",
         (Site("loop_encoder", SetArg("zeros", "dtype", None, nth=0), note="numpy"),
          Site("loop_encoder", Replace("torch.from_numpy(ids)", "torch.FloatTensor(ids)"),
               note="FloatTensor"),
          Site("trainer_dataset_class",
               Replace("{k: v.squeeze(0) for k, v in enc.items()}",
                       "{k: v.squeeze(0).float() for k, v in enc.items()}")),
          Site("project_tokens", Replace('enc["input_ids"].squeeze(0)',
                                         'enc["input_ids"].squeeze(0).float()'),
               "project_tokens/data.py"),
          Site("project_encoder", Replace('enc["input_ids"]', 'enc["input_ids"].float()'),
               "project_encoder/data.py"),
          Site("flat_loop", Replace('enc["input_ids"].squeeze(0)',
                                    'enc["input_ids"].squeeze(0).float()')))),
    Kind("class-ids-float", "crash",
         "Tensors and Inputs > Wrong Input > Wrong Type of Input Data",
         "class ids made as floats (a dtype changed, .float(), no dtype on a float source)",
         (Site("trainer_dataset_class", SetArg("tensor", "dtype", "torch.float", 'row["label"]')),
          Site("trainer_features", SetArg("tensor", "dtype", "torch.float", "self.labels[i]")),
          Site("loop_features", SetArg("tensor", "dtype", "torch.float", "y_train")),
          Site("loop_encoder", Replace('torch.tensor(df["label"].values)',
                                       'torch.tensor(df["label"].values).float()')),
          Site("project_encoder", SetArg("tensor", "dtype", "torch.float", "labels"),
               "project_encoder/data.py"),
          Site("project_tokens", SetArg("tensor", "dtype", "torch.float32", "self.labels[i]"),
               "project_tokens/data.py"),
          Site("project_features", SetArg("as_tensor", "dtype", "torch.float", "labels"),
               "project_features/data.py"),
          Site("flat_loop", SetArg("tensor", "dtype", "torch.float", 'self.rows[i]["label"]')),
          Site("flat_features", SetArg("tensor", "dtype", "torch.float", "y_train")))),
    Kind("features-float64", "crash",
         "Tensors and Inputs > Wrong Input > Wrong Type of Input Data",
         "float64 features into a float32 layer (the float32 cast dropped, dtype=torch.float64)",
         (Site("trainer_features", Replace("((X_train - mean) / std).astype(np.float32)",
                                           "(X_train - mean) / std")),
          Site("loop_features", Replace("torch.from_numpy(X_train.astype(np.float32))",
                                        "torch.from_numpy(X_train)")),
          Site("project_features", Replace("torch.from_numpy(features.astype(np.float32))",
                                           "torch.from_numpy(features)"),
               "project_features/data.py"),
          Site("flat_features", SetArg("tensor", "dtype", None, "X_train")),
          Site("flat_features", SetArg("tensor", "dtype", "torch.float64", "X_train"),
               note="float64 named"))),
    Kind("batchnorm-last-row", "crash",
         "Training > Hyperparameters > Wrongly implemented data batching",
         "drop_last dropped where 241 rows leave a last batch of one row for a batch-norm layer",
         (Site("trainer_dataset_class", SetArg("TrainingArguments", "dataloader_drop_last", None)),
          Site("trainer_features", SetArg("TrainingArguments", "dataloader_drop_last", None)),
          Site("loop_features", SetArg("DataLoader", "drop_last", None)),
          Site("project_encoder", SetArg("DataLoader", "drop_last", None)),
          Site("project_features", SetArg("DataLoader", "drop_last", None)),
          Site("flat_features", SetArg("DataLoader", "drop_last", None)))),
    Kind("num-labels-too-small", "crash",
         "Model > Layers > Layer Properties > Wrong defined output shape",
         "the head built for 2 classes where the data has 3 (a literal changed, an argument "
         "added)",
         (Site("trainer_minilm", SetArg("from_pretrained", "num_labels", "2")),
          Site("trainer_dataset_class", SetArg("EncoderClassifier", "num_labels", "2")),
          Site("trainer_features", SetArg("MLP", "num_labels", "2")),
          Site("loop_minilm", SetArg("from_pretrained", "num_labels", "2")),
          Site("loop_features", SetArg("build_model", "num_labels", "2")),
          Site("loop_encoder", SetArg("IntentClassifier", "num_labels", "2")),
          Site("project_encoder", SetArg("IntentModel", "num_labels", "2")),
          Site("project_tokens", SetArg("EncoderClassifier", "num_labels", "2")),
          Site("project_features", Replace("FeatureMLP(N_FEATURES, num_labels)",
                                           "FeatureMLP(N_FEATURES, 2)")),
          Site("project_trainer", ReplaceStatement("NUM_LABELS = 3", "NUM_LABELS = 2")),
          Site("flat_loop", SetArg("from_pretrained", "num_labels", "2")),
          Site("flat_features", Replace("nn.Linear(64, 3)", "nn.Linear(64, 2)")))),
    Kind("head-in-features-768", "crash",
         "Model > Layers > Layer Properties > Wrong input sample size for linear layer",
         "a head's in_features literal 384 (MiniLM-L6's width) changed to 768 (BERT-base's)",
         (Site("trainer_dataset_class", Replace("nn.Linear(384, 128)", "nn.Linear(768, 128)")),
          Site("loop_encoder", Replace("nn.Linear(384, num_labels)",
                                       "nn.Linear(768, num_labels)")),
          Site("project_encoder", Replace("nn.Linear(384, hidden)", "nn.Linear(768, hidden)"),
               "project_encoder/model.py"),
          Site("project_tokens", Replace("nn.Linear(384, num_labels)",
                                         "nn.Linear(768, num_labels)"),
               "project_tokens/model.py")),
         styles_note="flat scripts use a transformers head (no literal width)"),
    Kind("loss-reduction-none", "crash",
         "Training > Loss Function > Wrong loss function calculation",
         "reduction='none' added to the loss, no mean taken before backward()",
         (Site("trainer_weighted", SetArg("CrossEntropyLoss", "reduction", '"none"')),
          Site("trainer_dataset_class", SetArg("CrossEntropyLoss", "reduction", '"none"')),
          Site("trainer_features", SetArg("cross_entropy", "reduction", '"none"')),
          Site("loop_minilm", SetArg("cross_entropy", "reduction", '"none"')),
          Site("loop_features", SetArg("CrossEntropyLoss", "reduction", '"none"')),
          Site("loop_encoder", SetArg("CrossEntropyLoss", "reduction", '"none"')),
          Site("project_encoder", SetArg("CrossEntropyLoss", "reduction", '"none"')),
          Site("project_tokens", SetArg("CrossEntropyLoss", "reduction", '"none"')),
          Site("project_features", SetArg("CrossEntropyLoss", "reduction", '"none"')),
          Site("flat_loop", SetArg("CrossEntropyLoss", "reduction", '"none"')),
          Site("flat_features", SetArg("CrossEntropyLoss", "reduction", '"none"')))),
    Kind("loss-on-output-object", "crash",
         "Tensors and Inputs > Wrong Input > Wrong Input Format",
         "the loss given the model's output object instead of its .logits",
         (Site("trainer_weighted", Replace("loss_fct(outputs.logits, labels)",
                                           "loss_fct(outputs, labels)")),
          Site("loop_minilm", Replace('F.cross_entropy(outputs.logits, batch["labels"])',
                                      'F.cross_entropy(outputs, batch["labels"])')),
          Site("flat_loop", Replace("criterion(outputs.logits, labels)",
                                    "criterion(outputs, labels)"))),
         styles_note="the projects' models return a tensor (only a transformers model returns "
                     "an output object)"),
    Kind("item-not-squeezed", "crash",
         "Tensors and Inputs > Wrong Tensor Shape > missing squeeze",
         "a Dataset's __getitem__ returns the tokenizer's return_tensors='pt' rows unsqueezed",
         (Site("trainer_dataset_class", Replace("{k: v.squeeze(0) for k, v in enc.items()}",
                                                "dict(enc)")),
          Site("project_tokens", Seq((Replace('enc["input_ids"].squeeze(0)', 'enc["input_ids"]'),
                                      Replace('enc["attention_mask"].squeeze(0)',
                                              'enc["attention_mask"]'))),
               "project_tokens/data.py"),
          Site("flat_loop", Seq((Replace('enc["input_ids"].squeeze(0)', 'enc["input_ids"]'),
                                 Replace('enc["attention_mask"].squeeze(0)',
                                         'enc["attention_mask"]')))))),
    Kind("padding-dropped", "crash",
         "Training > Preprocessing of Training Data > Missing preprocessing (padding)",
         "the padding collator or the tokenizer's padding dropped",
         (Site("trainer_minilm", SetArg("Trainer", "data_collator", None)),
          Site("trainer_weighted", SetArg("WeightedTrainer", "data_collator", None)),
          Site("trainer_dataset_class", SetArg("tokenizer", "padding", None)),
          Site("loop_minilm", SetArg("DataLoader", "collate_fn", None, 'tokenized["train"]')),
          Site("project_encoder", SetArg("tokenizer", "padding", None),
               "project_encoder/data.py"),
          Site("project_trainer", SetArg("Trainer", "data_collator", None)),
          Site("flat_loop", SetArg("tokenizer", "padding", None)))),
    Kind("raw-dataset-passed", "crash",
         "API > Wrong API usage",
         "the raw (untokenized) split given to the Trainer or the DataLoader",
         (Site("trainer_minilm", Replace('tokenized["train"]', 'raw["train"]')),
          Site("loop_minilm", Replace('tokenized["train"]', 'raw["train"]')),
          Site("project_trainer", Replace('tokenized["train"]', 'raw["train"]')))),
    Kind("train-step-no-grad", "crash",
         "API > Wrong API usage (grad mode)",
         "the training step run under torch.no_grad (a decorator or a with block)",
         (Site("trainer_weighted", WrapWith("outputs = model(**inputs)", "torch.no_grad()")),
          Site("loop_minilm", Decorate("train_epoch", "torch.no_grad()")),
          Site("loop_features", Decorate("train_epoch", "torch.no_grad()")),
          Site("loop_encoder", Decorate("train_epoch", "torch.no_grad()")),
          Site("project_encoder", Decorate("train_step", "torch.no_grad()"),
               "project_encoder/engine.py"),
          Site("project_tokens", Decorate("train_step", "torch.no_grad()"),
               "project_tokens/engine.py"),
          Site("project_features", WrapWith("loss = self.loss_fn(", "torch.no_grad()"),
               "project_features/engine.py"),
          Site("flat_loop", WrapWith("outputs = model(", "torch.no_grad()")),
          Site("flat_features", WrapWith("loss = criterion(", "torch.no_grad()")))),
    Kind("class-weights-float64", "crash",
         "Tensors and Inputs > Wrong Input > Wrong Type of Input Data",
         "class weights made from a float64 numpy array without a float32 dtype",
         (Site("trainer_weighted", SetArg("tensor", "dtype", None, "weights")),
          Site("loop_features", SetArg("tensor", "dtype", None, "weights")),
          Site("project_tokens", SetArg("tensor", "dtype", None, "counts")),
          Site("flat_features", SetArg("tensor", "dtype", None, "class_weights")))),
    Kind("label-column-renamed", "crash",
         "Training > Training Data > Wrong labels for training data (column name)",
         "the class-id column renamed away from label/labels, or its rename dropped",
         (Site("trainer_minilm", InsertAfter("tokenized = raw.map(", RENAME_LABEL)),
          Site("loop_minilm", InsertAfter("tokenized = raw.map(", RENAME_LABEL)),
          Site("project_trainer", DropStatement('raw = raw.rename_column("intent", "label")'),
               "project_trainer/data.py"))),
    Kind("string-labels-unencoded", "crash",
         "Training > Preprocessing of Training Data > Missing preprocessing (encoding of "
         "categorical data)",
         "the step that encodes string intents as class ids dropped",
         (Site("trainer_features",
               Replace('df["intent"].map({name: i for i, name in enumerate(intents)}).to_numpy()',
                       'df["intent"].to_numpy()')),
          Site("project_trainer", DropStatement('raw = raw.class_encode_column("intent")'),
               "project_trainer/data.py"),
          Site("project_tokens", Replace('frame["intent"].map(label2id).tolist()',
                                         'frame["intent"].tolist()'),
               "project_tokens/data.py"),
          Site("flat_features", Replace("np.array([label2id[name] for name in intents[train_idx]])",
                                        "intents[train_idx]")))),
    Kind("metric-argmax-dropped", "crash",
         "Training > Validation/Testing > Wrong performance metric",
         "the metric computed on the logits: the argmax over the class axis dropped",
         (Site("trainer_minilm", Replace("np.argmax(logits, axis=-1)", "logits")),
          Site("trainer_weighted", Replace("logits.argmax(axis=-1)", "logits")),
          Site("loop_minilm", Replace("logits.argmax(dim=-1).tolist()", "logits.tolist()")),
          Site("project_trainer", Replace("np.argmax(logits, axis=-1)", "logits"),
               "project_trainer/model.py"))),
)

SILENT: tuple[Kind, ...] = (
    Kind("zero-grad-dropped", "silent",
         "API > Missing API call (optimizer.zero_grad)",
         "optimizer.zero_grad() dropped from the training step",
         (_drop_zero_grad("loop_minilm"), _drop_zero_grad("loop_features"),
          _drop_zero_grad("loop_encoder"),
          _drop_zero_grad("project_encoder", "self.optimizer.zero_grad()",
                          "project_encoder/engine.py"),
          _drop_zero_grad("project_tokens", "self.optimizer.zero_grad()",
                          "project_tokens/engine.py"),
          _drop_zero_grad("project_features", "self.optimizer.zero_grad()",
                          "project_features/engine.py"),
          _drop_zero_grad("flat_loop"), _drop_zero_grad("flat_features")),
         styles_note="a Trainer clears the gradients itself"),
    Kind("zero-grad-after-backward", "silent",
         "API > Wrong API usage (zero_grad between backward and step)",
         "optimizer.zero_grad() moved between loss.backward() and optimizer.step()",
         (Site("loop_minilm", MoveStatement("optimizer.zero_grad()", "loss.backward()")),
          Site("loop_features", MoveStatement("optimizer.zero_grad()", "loss.backward()")),
          Site("loop_encoder", MoveStatement("optimizer.zero_grad()", "loss.backward()")),
          Site("project_encoder", MoveStatement("self.optimizer.zero_grad()", "loss.backward()"),
               "project_encoder/engine.py"),
          Site("project_tokens", MoveStatement("self.optimizer.zero_grad()", "loss.backward()"),
               "project_tokens/engine.py"),
          Site("project_features", MoveStatement("self.optimizer.zero_grad()",
                                                 "loss.backward()"),
               "project_features/engine.py"),
          Site("flat_loop", MoveStatement("optimizer.zero_grad()", "loss.backward()")),
          Site("flat_features", MoveStatement("optimizer.zero_grad()", "loss.backward()"))),
         styles_note="a Trainer clears the gradients itself"),
    Kind("eval-mode-dropped", "silent",
         "API > Missing API call (model.eval: dropout and batch norm in training mode)",
         "model.eval() dropped before an evaluation (in a helper, a method, at module level)",
         (_eval_mode("loop_minilm"), _eval_mode("loop_features"), _eval_mode("loop_encoder"),
          _eval_mode("project_encoder", "self.model.eval()", "project_encoder/engine.py"),
          _eval_mode("project_tokens", "self.model.eval()", "project_tokens/engine.py"),
          _eval_mode("project_features", "self.model.eval()", "project_features/engine.py"),
          _eval_mode("flat_loop"), _eval_mode("flat_features")),
         styles_note="a Trainer switches the model to eval mode itself"),
    Kind("eval-loader-shuffled", "silent",
         "API > Wrong position of data shuffle operation",
         "shuffle=True on the evaluation loader whose predictions are compared in order",
         (Site("loop_minilm", SetArg("DataLoader", "shuffle", "True", 'tokenized["validation"]')),
          Site("loop_features", SetArg("DataLoader", "shuffle", "True", "val_set")),
          Site("project_encoder", SetArg("DataLoader", "shuffle", "True", "val_set")),
          Site("project_features", SetArg("DataLoader", "shuffle", "True", "val_set")),
          Site("flat_loop", SetArg("DataLoader", "shuffle", "True", "val_set")),
          Site("flat_features", SetArg("DataLoader", "shuffle", "True", "X_val"))),
         styles_note="a Trainer never shuffles its evaluation data"),
    Kind("step-lr-per-batch", "silent",
         "Training > Hyperparameters > Suboptimal learning rate (an epoch schedule per batch)",
         "an epoch schedule's scheduler.step() (StepLR) moved into the batch loop",
         (Site("loop_features", MoveStatement("scheduler.step()", "optimizer.step()")),
          Site("project_encoder", MoveStatement("self.scheduler.step()", "self.optimizer.step()"),
               "project_encoder/engine.py"),
          Site("project_features", MoveStatement("self.scheduler.step()",
                                                 "self.optimizer.step()"),
               "project_features/engine.py"),
          Site("flat_features", MoveStatement("scheduler.step()", "optimizer.step()"))),
         styles_note="a Trainer steps its schedule itself"),
    Kind("warmup-per-epoch", "silent",
         "Training > Hyperparameters > Suboptimal learning rate (a step schedule per epoch)",
         "a per-step warmup schedule's scheduler.step() moved out of the batch loop",
         (Site("loop_minilm", MoveStatement("scheduler.step()", "return total / len(loader)",
                                          before=True)),
          Site("project_tokens", MoveStatement("self.scheduler.step()", "total = sum("),
               "project_tokens/engine.py"),
          Site("flat_loop", MoveStatement("scheduler.step()", "for step, (input_ids"))),
         styles_note="a Trainer steps its schedule itself"),
    Kind("lr-times-1000", "silent",
         "Training > Hyperparameters > Suboptimal learning rate",
         "the learning rate literal multiplied by 1000",
         (_lr("trainer_minilm", "TrainingArguments", "0.1", "learning_rate"),
          _lr("trainer_weighted", "TrainingArguments", "0.1", "learning_rate"),
          _lr("trainer_dataset_class", "TrainingArguments", "0.1", "learning_rate"),
          _lr("trainer_features", "TrainingArguments", "3.0", "learning_rate"),
          _lr("loop_minilm", "AdamW", "0.1"), _lr("loop_features", "Adam", "3.0"),
          _lr("loop_encoder", "AdamW", "0.1"), _lr("project_encoder", "Adam", "3.0"),
          _lr("project_tokens", "AdamW", "0.1"), _lr("project_features", "Adam", "3.0"),
          _lr("project_trainer", "TrainingArguments", "0.1", "learning_rate"),
          _lr("flat_loop", "AdamW", "0.1"), _lr("flat_features", "Adam", "3.0"))),
    Kind("stats-before-split", "silent",
         "Training > Validation/Testing > Incorrect train/test data split (statistics leak)",
         "the normalisation statistics or the scaler fitted on all rows, before the split",
         (Site("trainer_features", Seq((
             Replace("X_train.mean(axis=0), X_train.std(axis=0) + 1e-6",
                     "X.mean(axis=0), X.std(axis=0) + 1e-6"),
             MoveStatement("mean, std =", "X_train, X_val, y_train, y_val =", before=True)))),
          Site("loop_features", Replace("StandardScaler().fit(X_train)",
                                        'StandardScaler().fit(featurize(df["text"].tolist()))')),
          Site("project_features", Seq((
              Replace("StandardScaler().fit(X_train)", "StandardScaler().fit(X)"),
              MoveStatement("scaler = StandardScaler()", "X_train, X_val, train_intents",
                            before=True))),
              "project_features/data.py"),
          Site("flat_features", Seq((
              Replace("X_train.mean(axis=0), X_train.std(axis=0) + 1e-6",
                      "features.mean(axis=0), features.std(axis=0) + 1e-6"),
              MoveStatement("mean, std =", "order = rng.permutation", before=True)))))),
    Kind("metric-flat-argmax", "silent",
         "Training > Validation/Testing > Wrong performance metric",
         "argmax() without its class axis: one flat index compared with every label",
         (Site("trainer_minilm", Replace("np.argmax(logits, axis=-1)", "np.argmax(logits)")),
          Site("trainer_weighted", Replace("logits.argmax(axis=-1)", "logits.argmax()")),
          Site("trainer_dataset_class", Replace("logits.argmax(-1)", "logits.argmax()")),
          Site("trainer_features", Replace("np.argmax(logits, axis=1)", "np.argmax(logits)")),
          Site("loop_encoder", Replace("model(ids, mask).argmax(dim=-1)",
                                       "model(ids, mask).argmax()")),
          Site("project_tokens", Replace("logits.argmax(dim=-1)", "logits.argmax()"),
               "project_tokens/engine.py"),
          Site("project_features", Replace("logits.argmax(dim=1)", "logits.argmax()"),
               "project_features/engine.py"),
          Site("project_trainer", Replace("np.argmax(logits, axis=-1)", "np.argmax(logits)"),
               "project_trainer/model.py"))),
    Kind("val-own-encoding", "silent",
         "Training > Preprocessing of Training Data > Wrong preprocessing (encoding of "
         "categorical data)",
         "the validation split encoded with its own label mapping (another order of intents)",
         (Site("trainer_weighted", Replace('val_df["intent"].map(label2id)',
                                           'pd.factorize(val_df["intent"])[0]')),
          Site("loop_features", Replace('intents.get_indexer(val_df["intent"])',
                                        'pd.factorize(val_df["intent"])[0]')),
          Site("project_tokens", Replace(
              'TicketDataset(DATA / "tickets_validation.csv", tokenizer, label2id)',
              'TicketDataset(DATA / "tickets_validation.csv", tokenizer, '
              'build_label_map(DATA / "tickets_validation.csv"))')),
          Site("project_features", Replace("intents.get_indexer(val_intents)",
                                           "pd.factorize(val_intents)[0]"),
               "project_features/data.py"),
          Site("flat_features", Replace("np.array([label2id[name] for name in intents[val_idx]])",
                                        "pd.factorize(intents[val_idx])[0]")))),
    Kind("softmax-before-ce", "silent",
         "Model > Layers > Missing/Redundant/Wrong Layer > Redundant softmax layer",
         "softmax applied to the logits before a cross-entropy loss (which applies log_softmax)",
         (Site("trainer_weighted", Replace("loss_fct(outputs.logits, labels)",
                                           "loss_fct(outputs.logits.softmax(dim=-1), labels)")),
          Site("trainer_dataset_class", Replace("self.loss_fn(logits, labels)",
                                                "self.loss_fn(logits.softmax(dim=-1), labels)")),
          Site("loop_minilm", Replace('F.cross_entropy(outputs.logits, batch["labels"])',
                                      'F.cross_entropy(outputs.logits.softmax(dim=-1), '
                                      'batch["labels"])')),
          Site("loop_features", Replace("criterion(model(x), y)",
                                        "criterion(model(x).softmax(dim=1), y)")),
          Site("project_encoder", Replace("self.head(pooled)", "self.head(pooled).softmax(dim=-1)"),
               "project_encoder/model.py"),
          Site("project_features", Replace("self.out(self.body(x))",
                                           "self.out(self.body(x)).softmax(dim=-1)"),
               "project_features/model.py"),
          Site("flat_loop", Replace("criterion(outputs.logits, labels)",
                                    "criterion(outputs.logits.softmax(dim=-1), labels)")),
          Site("flat_features", Replace("criterion(model(x), y)",
                                        "criterion(model(x).softmax(dim=1), y)")))),
    Kind("pad-is-eos", "silent",
         "Training > Loss Function > Missing masking of invalid values (real end-of-text "
         "labels masked as padding)",
         "the pad token set to the end-of-text token: the collator masks every real "
         "end-of-text label, the model never learns to stop",
         tuple(Site(script, Replace("tokenizer.unk_token", "tokenizer.eos_token"))
               for script in ("lm_trainer", "lm_loop", "lm_flat"))),
)

KINDS: tuple[Kind, ...] = CRASHES + SILENT


def kind(kind_id: str) -> Kind:
    return next(k for k in KINDS if k.id == kind_id)


@cache
def _source(path: str) -> tuple[str, cst.Module]:
    """A healthy file's text and its parse (relative to ``sample_scripts/mutations``)."""
    text = (SAMPLES / path).read_text(encoding="utf-8")
    return text, cst.parse_module(text)


def _mutant_id(kind_id: str, site: Site, taken: set[str]) -> str:
    base = f"{kind_id}:{site.script}"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    taken.add(name)
    return name


def mutants() -> list[Mutant]:
    """Every declared mutant, its sources mutated; raises ``mutation_ops.AnchorError`` (or
    a parse error) for a site whose anchor is gone from its healthy script, and ValueError
    for a mutant that changes nothing or does not compile."""
    return list(_mutants())


@cache
def _mutants() -> tuple[Mutant, ...]:
    scripts = healthy_scripts()
    found: list[Mutant] = []
    taken: set[str] = set()
    for k in KINDS:
        for site in k.sites:
            healthy = scripts[site.script]
            path = site.file or healthy.script
            original, parsed = _source(path)
            try:
                mutated = mutate(parsed, site.op)
            except AnchorError as error:
                raise AnchorError(f"{k.id} at {path}: {error}") from None
            if mutated == original:
                raise ValueError(f"{k.id} at {path}: the mutation changed nothing")
            compile(mutated, path, "exec")
            found.append(Mutant(_mutant_id(k.id, site, taken), k, healthy, site,
                                {path: mutated}))
    return tuple(found)


def styles_of(k: Kind) -> set[str]:
    scripts = healthy_scripts()
    return {scripts[s.script].style for s in k.sites}
