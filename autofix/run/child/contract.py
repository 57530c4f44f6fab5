"""The contract between the parent and the child: the probe's event names and payload
fields, the environment variables that switch the child's checks, and the facts both sides
name the same way. Standard library only and free of side effects: the parent imports
this module (and :mod:`symptoms`, the shared stall rule), never the probes themselves.

Events are JSON lines appended to ``AUTOFIX_PROBE_FILE``: ``{"event": NAME, **payload}``;
the child emits them (:mod:`events`) and ``autofix/run/probe_events.py`` reads them from
these definitions (a test checks both sides).
"""

from __future__ import annotations


class Env:
    """The environment variables the parent sets for a run."""

    PROBE_FILE = "AUTOFIX_PROBE_FILE"  # JSON-lines file the probe appends its events to
    MAX_STEPS = "AUTOFIX_MAX_STEPS"  # stop training cleanly after this many steps (0: none)
    PREFLIGHT = "AUTOFIX_PREFLIGHT"  # "1": preflight checks at train()/fit()/first batch
    SAMPLE_ROWS = "AUTOFIX_SAMPLE_ROWS"  # cut each loaded split to this many rows (0: off)
    RECORD_ONLY = "AUTOFIX_RECORD_ONLY"  # "1": a stall is recorded, training goes on
    REPO_ROOT = "AUTOFIX_REPO_ROOT"  # the user's repository: its files are the user's frames
    PATCHED_MODULES = "AUTOFIX_PATCHED_MODULES"  # JSON {real path: patched file} (modules.py)


class Event:
    """The event names (``emit(Event.STEP, ...)``)."""

    VERSIONS = "versions"
    EXCEPTION = "exception"
    TRAINER = "trainer"
    DATASET = "dataset"
    KERAS = "keras"
    STEP = "step"
    SYMPTOM = "symptom"
    NUM_CLASSES = "num_classes"
    CHANCE = "chance"
    BUDGET_REACHED = "budget_reached"
    EARLY_EVAL = "early_eval"
    PROBE_ERROR = "probe_error"
    EXIT = "exit"
    PREFLIGHT = "preflight"
    FINDING = "finding"
    BUDGET_EXTENDED = "budget_extended"
    TRAIN_FACTS = "train_facts"
    WOULD_STOP = "would_stop"
    SAMPLED = "sampled"
    PREFLIGHT_FAULT = "preflight_fault"
    EVAL_METRICS = "eval_metrics"
    LOOP_ENDED = "loop_ended"
    LM_FACTS = "lm_facts"
    NUMERIC = "numeric"
    STEP_EVIDENCE = "step_evidence"
    PHASE = "phase"
    INVARIANT = "invariant"


#: Fields of a ``dataset`` event and of each entry of a ``trainer`` event's ``datasets``:
#: role, column names, rows, the label column, its kind ("int"/"str"/"float"), the
#: ClassLabel's number of classes, or the label range over the whole split.
DATASET_FIELDS = ("role", "columns", "num_rows", "label_column", "label_kind",
                  "label_classes", "label_min", "label_max")

#: Every event and the payload fields it may carry (all optional to the reader).
EVENTS: dict[str, tuple[str, ...]] = {
    Event.VERSIONS: ("versions",),  # {distribution: version}
    # type (qualified), message, frames [{file, line, function, text}], chain [exception],
    # facts [{file, line, function, user, locals: {name: summary}}] of the frames that
    # matter, innermost first (facts.py); contract: the input contract of the failing call
    # that its real arguments broke, with their runtime provenance (call_contracts/), {}
    # when none; forward: the last forward of a model from the user's code {grad, graph,
    # training} ({}: none seen)
    Event.EXCEPTION: ("type", "message", "frames", "chain", "facts", "contract", "forward"),
    Event.TRAINER: ("trainer_class", "model_class", "num_labels", "datasets"),
    Event.DATASET: (*DATASET_FIELDS, "requested"),
    Event.KERAS: ("keras", "model_class", "hf_model", "num_labels", "optimizer", "lr", "loss",
                  "from_logits"),
    # loss: number, or "nan"/"inf" as a string; total: the script's own length in these
    # steps as known at this one (plan.py), 0 when unknown
    Event.STEP: ("step", "loss", "lr", "total"),
    # samples: [{index, label, loss}] of the first non-finite batch (nan-loss)
    Event.SYMPTOM: ("kind", "step", "evidence", "num_classes", "num_labels", "samples",
                    "analysis_error"),
    Event.NUM_CLASSES: ("value",),
    # the task's chance level, measured at the training loss (symptoms.Chance): value
    # (nats), kind ("classes", "tokens", "vocab", "pairs"), label ("ln 3", "H"), classes
    # (C or V), tokens (scored tokens the entropy was counted on); the last one holds
    Event.CHANCE: ("value", "kind", "label", "classes", "tokens"),
    Event.BUDGET_REACHED: ("step",),
    # the early evaluation (early.py): its rows, and when it failed, the error (never the
    # run's failure) and whether the Trainer's own evaluation is owed at the budget's end
    Event.EARLY_EVAL: ("rows", "deferred", "owed"),
    Event.PROBE_ERROR: ("where", "message"),  # a probe failed; the script ran on
    Event.EXIT: ("code", "stopped"),
    # a preflight check that failed (issue 10): the check's name and the exception the
    # run would raise (as ``exception``)
    Event.PREFLIGHT: ("check", "type", "message", "frames", "chain", "facts", "contract",
                      "forward"),
    # a preflight check that found a fault the run would not raise but trains on (issue 8,
    # "trains, but wrongly"): the check, the fault's category id and the evidence line
    Event.PREFLIGHT_FAULT: ("check", "category", "evidence"),
    # something a healthy run showed (issue 8: learning-slowly...), not a failure
    Event.FINDING: ("kind", "step", "evidence"),
    # an unclear stall verdict at the budget: training goes on to ``limit`` (issue 8)
    Event.BUDGET_EXTENDED: ("step", "limit", "window_mean", "reason"),
    # facts gathered over the run for the "trains wrongly" findings (issue 8): parameter
    # counts and dtype, optimizer steps, backward and zero_grad calls, and the argmax
    # predictions and labels (lists of class ids, row by row) of the last ``RECENT_BATCHES``
    # training forwards of a classification model; the dropout / batch norm layer calls
    # made under no_grad from the user's model call in training and in eval mode, and the
    # first lines that made them in training mode [{file, line, function, model, layer,
    # calls}] (modes.py); ``schedule``: each lr scheduler of a hand loop [{class, params,
    # calls, stepped ("batch"/"epoch"/""), site {file, line, function}, per_epoch, epochs,
    # optimizer_steps, sized ("epochs"/"steps"/""), collapse_step, per_epoch_collapse,
    # first_epoch, peak}] (schedules.py)
    Event.TRAIN_FACTS: ("params_total", "params_trainable", "param_dtype", "optimizer_steps",
                        "backward_calls", "zero_grad_calls", "recent_predicted",
                        "recent_labels", "no_grad_train_calls", "no_grad_eval_calls",
                        "train_mode_evals", "schedule"),
    # what the language-model checks measured (preflight_lm.py), merged into the report's
    # facts under "lm": the trained model's class, parameter counts, PEFT adapter state and
    # module names (linear layers, attention projections), one batch's label facts, the
    # pad and end-of-text ids, and ``dropped`` (rows TRL's preparation dropped, with the
    # untruncated lengths)
    Event.LM_FACTS: ("where", "model_class", "collator", "params_total", "params_trainable",
                     "peft_adapter", "peft_inference_mode", "linear_names",
                     "attention_linear", "max_position_embeddings", "pad_token_id",
                     "eos_token_id", "batch_keys", "batch_rows", "scored_labels",
                     "rows_without_targets", "eos_in_inputs", "eos_in_labels", "dropped"),
    # record-only benchmark mode: the symptom that would have stopped the run
    Event.WOULD_STOP: ("kind", "step", "evidence", "num_classes", "num_labels", "samples",
                       "analysis_error"),
    # a dataset split cut for a diagnosis run (--sample-rows), with the whole split's
    # label range
    Event.SAMPLED: ("origin", "split", "rows", "kept", "label_column", "label_min",
                    "label_max"),
    # the metrics of one evaluation the script ran (``Trainer.evaluate``, or the evaluation
    # during training): the optimizer step it came at and {name: number}, the probe's own
    # early evaluation left out
    Event.EVAL_METRICS: ("step", "metrics"),
    # the step budget ended a hand-written training loop; the script runs on (loops.py)
    Event.LOOP_ENDED: ("step",),
    # the numeric evidence of a diverging loss (numeric.py), merged into the report's facts
    # under "numeric": ``inputs`` [{name, file, line, position, module, kind ("tensor" or
    # "array"), dtype, shape, abs_max, column_mean, column_std}] of the first forward's
    # float inputs, ``grad_norms`` [number or "inf"/"nan"] of each hand-loop step
    Event.NUMERIC: ("inputs", "grad_norms"),
    # what the optimizer steps showed (evidence.py), merged into the report's facts under
    # "step_evidence": the cause, step and evidence line of a verdict made from it (sent
    # once, at the verdict), and the measurements (steps read, the median update-to-weight
    # ratio of the last 10 steps and the ratios of the first 30, steps with unchanged
    # weights and with no gradients, parameter counts, pretrained, adapter, adam,
    # optimizer, and "fast": Adam moving a pretrained classifier at evidence.RATIO_TRIAL)
    Event.STEP_EVIDENCE: ("cause", "step", "evidence", "steps", "ratio", "ratios",
                          "unchanged", "no_grads", "trainable", "total", "pretrained",
                          "adapter", "adam", "optimizer", "fast"),
    # a phase the run reached (phases.py): kind ("evaluate", "save", "reload", "predict"),
    # the optimizer step it came at, what ran it ("Trainer.evaluate", "torch.save", ...),
    # and for a hand loop's evaluation its forwards, rows and the held-out metrics the
    # probe measured {held_out_loss, held_out_accuracy, held_out_rows}
    Event.PHASE: ("kind", "step", "what", "forwards", "rows", "metrics"),
    # a broken invariant of data or evaluation seen on the run's real objects
    # (invariants.py), once per place: the category id, the step it showed at, the evidence
    # line, the user's file, line, function and line text, and the measurements a recipe
    # reads (``facts``: shapes, the mappings per split, the loss and the probability layer)
    Event.INVARIANT: ("kind", "step", "evidence", "file", "line", "function", "text",
                      "facts"),
}


#: Keras cross-entropies that read the model's outputs as probabilities unless they are
#: given ``from_logits=True`` (a string name always means ``from_logits=False``).
PROBABILITY_LOSSES = ("sparse_categorical_crossentropy", "categorical_crossentropy",
                      "binary_crossentropy")
