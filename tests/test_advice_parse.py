"""``autofix.categories.advice``: one real library message (or more) per form the parser
understands.

Every message below was produced by the installed libraries (transformers 5.24, datasets 5.2,
accelerate 1.15, TRL 1.16, PEFT 0.21) and saved by ``benchmarks/trigger_advice.py``; the
``did you mean`` one is CPython's own suggestion line.
"""

from __future__ import annotations

import pytest

from autofix.categories.advice import Advice, normalise_target, parse_advice, parse_value


def one(message: str) -> Advice:
    advice = parse_advice(message)
    assert len(advice) == 1, advice
    return advice[0]


def alts(advice: Advice) -> list[tuple[str, str | None, object]]:
    assert advice.kind == "either", advice
    return [(a.kind, a.target, a.value) for a in advice.alternatives]


# ---- either


def test_either_set_or_pass_with_owners() -> None:
    a = one(
        "You have set `args.eval_strategy` to IntervalStrategy.STEPS but you didn't pass an "
        "`eval_dataset` to "
        "`Trainer`. Either set `args.eval_strategy` to `no` or pass an `eval_dataset`. "
    )
    assert alts(a) == [("set", "eval_strategy", "no"), ("pass", "eval_dataset", None)]
    assert [x.owner for x in a.alternatives] == ["TrainingArguments", "Trainer"]


def test_either_of_assignments() -> None:
    a = one(
        "Resuming is not supported for models sharded at load time (`DistributedConfig`)"
        ", so their optimizer "
        "state cannot be checkpointed. Pass `save_only_model=True` or `save_strategy='no'`."
    )
    assert alts(a) == [("set", "save_only_model", True), ("set", "save_strategy", "no")]


def test_either_comma_list_after_either() -> None:
    a = one(
        "When `padding_free=True` without packing, `max_length` is not enforced. Either enable "
        "packing (e.g., "
        "`packing=True, packing_strategy='bfd'`)"
        ", provide already truncated inputs, or set `max_length=None`."
    )
    assert alts(a) == [("set", "packing", True), ("set", "max_length", None)]
    assert a.alternatives[1].has_value  # None is named, not missing


def test_one_of_list_of_values() -> None:
    a = one("Invalid value for scale_rewards: nope. Must be one of 'batch', 'group', or 'none'.")
    assert alts(a) == [("set", "scale_rewards", v) for v in ("batch", "group", "none")]


def test_one_of_bracketed_list() -> None:
    a = one(
        "`auto_wrap_policy` must be one of ['TRANSFORMER_BASED_WRAP', 'SIZE_BASED_WRAP', "
        "'NO_WRAP'], got NOPE."
    )
    assert [x.value for x in a.alternatives] == [
        "TRANSFORMER_BASED_WRAP",
        "SIZE_BASED_WRAP",
        "NO_WRAP",
    ]


def test_subject_from_invalid_parameter_sentence() -> None:
    a = one(
        "null_placement 'middle' is an invalid parameter value. Must be either 'last', 'at_end', "
        "'first' or "
        "'at_start'."
    )
    assert {x.target for x in a.alternatives} == {"null_placement"}


def test_requires_either_names() -> None:
    a = one(
        "evaluation strategy IntervalStrategy.STEPS requires either non-zero --eval_steps or "
        "--logging_steps"
    )
    assert [(x.kind, x.target) for x in a.alternatives] == [
        ("requires", "eval_steps"),
        ("requires", "logging_steps"),
    ]
    assert a.alternatives[0].constraint == "non-zero"


def test_requires_either_on_a_class_is_pass() -> None:
    a = one("`Trainer` requires either a `model` or `model_init` argument")
    assert [(x.kind, x.target, x.owner) for x in a.alternatives] == [
        ("pass", "model", "Trainer"),
        ("pass", "model_init", "Trainer"),
    ]


def test_not_both_is_remove_one() -> None:
    a = one("Please use either `keep_in_memory` or `cache_file_name` but not both.")
    assert alts(a) == [("remove", "keep_in_memory", None), ("remove", "cache_file_name", None)]


def test_both_provided_specify_one() -> None:
    a = one("Both `seed` and `generator` were provided. Please specify just one of them.")
    assert alts(a) == [("remove", "seed", None), ("remove", "generator", None)]


def test_at_most_one_true() -> None:
    a = one("At most one of fp16 and bf16 can be True, but not both")
    assert alts(a) == [("set", "fp16", False), ("set", "bf16", False)]


def test_at_least_one_must_be_set() -> None:
    a = one(
        "At least one of `vllm_importance_sampling_clip_min` or "
        "`vllm_importance_sampling_clip_max` must be set "
        "when `vllm_importance_sampling_mode` is a `*_truncate` mode."
    )
    assert alts(a) == [
        ("specify", "vllm_importance_sampling_clip_min", None),
        ("specify", "vllm_importance_sampling_clip_max", None),
    ]


def test_enable_or_unset() -> None:
    a = one(
        "log_completions_hub_repo is set, but log_completions is False. Enable log_completions to "
        "upload "
        "completions to the Hub, or unset log_completions_hub_repo."
    )
    assert alts(a) == [
        ("set", "log_completions", True),
        ("remove", "log_completions_hub_repo", None),
    ]


def test_unset_or_set_it_resolves_it() -> None:
    a = one(
        "[RANK 0] You are using an `IterableDataset` for training with `dispatch_batches=True`. "
        "`dispatch_batches` "
        "is forced to `False` when using an `IterableDataset`. To remove this warning, unset "
        "`dispatch_batches` in "
        "`SFTConfig` or set it to `False`."
    )
    assert alts(a) == [("remove", "dispatch_batches", None), ("set", "dispatch_batches", False)]
    assert {x.owner for x in a.alternatives} == {"SFTConfig"}


def test_available_metrics_become_alternatives() -> None:
    a = one(
        "The `metric_for_best_model` training argument is set to 'eval_f1', which is not found in "
        "the evaluation "
        "metrics. The available evaluation metrics are: ['eval_loss', 'eval_macro_f1']. Consider "
        "changing the "
        "`metric_for_best_model` via the TrainingArguments."
    )
    assert alts(a) == [
        ("set", "metric_for_best_model", "eval_loss"),
        ("set", "metric_for_best_model", "eval_macro_f1"),
    ]
    assert a.alternatives[0].owner == "TrainingArguments"


def test_expected_either_value_or_kind() -> None:
    a = one(
        "Invalid `dtype` passed to the config. Expected either 'auto' or a string representing a "
        "valid "
        "`torch.dtype` (e.g., 'float32'), but got float77."
    )
    assert a.alternatives[0].target == "dtype" and a.alternatives[0].value == "auto"
    assert a.alternatives[1].constraint and "torch.dtype" in a.alternatives[1].constraint


def test_incompatible_pair() -> None:
    a = one(
        "Passing a `model_init` is incompatible with providing the `optimizers` argument. You "
        "should subclass "
        "`Trainer` and override the `create_optimizer_and_scheduler` method."
    )
    assert alts(a) == [("remove", "model_init", None), ("remove", "optimizers", None)]


def test_adjust_any_of_the_parameters() -> None:
    a = one(
        "With n_samples=2, test_size=0.9 and train_size=None, the resulting train set will be "
        "empty. Adjust any "
        "of the aforementioned parameters."
    )
    assert [x.target for x in a.alternatives] == ["test_size", "train_size"]


# ---- set


def test_set_eq_with_owner_class() -> None:
    a = one(
        "Packing is not supported for vision datasets. Please set `packing=False` in the SFTConfig."
    )
    assert (a.kind, a.target, a.value, a.owner) == ("set", "packing", False, "SFTConfig")


def test_set_to_with_owner() -> None:
    a = one(
        "No columns in the dataset match the model's forward method signature: (input_ids, labels)"
        ". The "
        "following columns have been ignored: [foo, bar]. Please check the dataset and model. You "
        "may need to set "
        "`remove_unused_columns=False` in `TrainingArguments`."
    )
    assert (a.kind, a.target, a.value, a.owner) == (
        "set",
        "remove_unused_columns",
        False,
        "TrainingArguments",
    )


def test_set_dotted_config_attribute() -> None:
    a = one(
        "FSDP2 mapping failed (missing: lm_head.weight)"
        ". This is likely due to tied embeddings (config has "
        "tie_word_embeddings=True but checkpoint has separate weights). To fix, try: Set "
        "`model.config.tie_word_embeddings = False` after loading the model."
    )
    assert (a.target, a.value, a.owner) == ("tie_word_embeddings", False, "model.config")


def test_set_subscripted_config() -> None:
    a = one(
        "FSDP1 (`fsdp_config['version'] = 1`)"
        " is deprecated and will be removed in Transformers v5.20. Please "
        "migrate to FSDP2 by setting `fsdp_config['version'] = 2` (the default)."
    )
    assert (a.kind, a.target, a.value, a.owner) == ("set", "version", 2, "fsdp_config")


def test_pass_assignment_is_set() -> None:
    a = one("The argument lora_bias=True is not supported for DoRA, please pass use_dora=False")
    assert (a.kind, a.target, a.value) == ("set", "use_dora", False)


def test_use_dict_value() -> None:
    advice = parse_advice(
        "`use_liger_kernel=True` is deprecated and will be removed in v2.0.0. Use the Hub kernels "
        'instead, with `model_init_kwargs={"use_kernels": True}`.'
    )
    assert any(a.target == "model_init_kwargs" and a.value == {"use_kernels": True} for a in advice)


def test_should_be_set_to_value() -> None:
    a = one(
        "When using `'luspo'` loss, `importance_sampling_level` should be set to `'sequence'` to "
        "mirror the "
        "paper's setup."
    )
    assert (a.kind, a.target, a.value) == ("set", "importance_sampling_level", "sequence")


def test_must_be_constraint() -> None:
    a = one(
        "args.max_steps must be set to a positive value if dataloader does not have a length, was "
        "-1"
    )
    assert (a.target, a.owner, a.constraint, a.has_value) == (
        "max_steps",
        "TrainingArguments",
        "a positive value",
        False,
    )


def test_must_be_comparison() -> None:
    a = one("`num_samples` must be greater than 0.")
    assert (a.target, a.constraint) == ("num_samples", "greater than 0")


def test_expected_value_comparison() -> None:
    a = one("Got warmup_steps = -1, Expected value warmup_steps >= 0")
    assert (a.target, a.constraint) == ("warmup_steps", ">= 0")


def test_set_and_lower_instead() -> None:
    advice = parse_advice(
        "auto_find_batch_size is not supported by GRPO, because the generation batch must contain "
        "full prompt groups of num_generations completions, and reducing the batch size on "
        "out-of-memory breaks this invariant. Set auto_find_batch_size=False and lower "
        "per_device_train_batch_size instead."
    )
    assert [(a.target, a.value, a.constraint) for a in advice] == [
        ("auto_find_batch_size", False, None),
        ("per_device_train_batch_size", None, "decrease"),
    ]


def test_cannot_be_value() -> None:
    a = one("`config_name` cannot be 'data'. Please, choose another name for configuration.")
    assert (a.target, a.constraint) == ("config_name", "!= 'data'")


def test_token_must_be_in_vocabulary() -> None:
    a = one(
        "The specified `eos_token` ('<|nope"
        "|>') is not found in the vocabulary of the given `processing_class` "
        "(BertTokenizer). Ensure that the `eos_token` exists in the vocabulary before using it as a"
        "n EOS token."
    )
    assert (a.kind, a.target) == ("set", "eos_token")


# ---- specify / pass / requires


def test_has_to_be_specified() -> None:
    a = one(
        "The train_dataset does not implement __len__, so the number of training steps cannot be "
        "inferred; "
        "max_steps has to be specified. The total number of steps must be known in advance to "
        "bound the training "
        "loop and to configure the learning rate scheduler."
    )
    assert (a.kind, a.target) == ("specify", "max_steps")


def test_must_be_provided_with_args_prefix() -> None:
    a = one(
        "`args.metric_for_best_model` must be provided when using 'best' save_strategy or if "
        "`args.load_best_model_at_end` is set to `True`."
    )
    assert (a.kind, a.target, a.owner) == ("specify", "metric_for_best_model", "TrainingArguments")


def test_must_also_be_specified() -> None:
    a = one("When `layers_pattern` is specified, `layers_to_transform` must also be specified. ")
    assert (a.kind, a.target) == ("specify", "layers_to_transform")


def test_is_required() -> None:
    a = one("`train_dataset` is required")
    assert (a.kind, a.target) == ("specify", "train_dataset")


def test_requires_to_be_defined() -> None:
    a = one("EarlyStoppingCallback requires metric_for_best_model to be defined")
    assert (a.kind, a.target, a.when, a.constraint) == (
        "requires",
        "metric_for_best_model",
        "EarlyStoppingCallback",
        "defined",
    )


def test_requires_assignment() -> None:
    a = one(
        "`gradient_checkpointing_kwargs={'selective': True}` requires "
        "`gradient_checkpointing=True`."
    )
    assert (a.kind, a.target, a.value, a.when) == (
        "requires",
        "gradient_checkpointing",
        True,
        "gradient_checkpointing_kwargs",
    )


def test_requires_strategies_to_match() -> None:
    a = one(
        "--load_best_model_at_end requires the save and eval strategy to match, except when "
        '--save_strategy="best", but found - Evaluation strategy: IntervalStrategy.NO - Save '
        'strategy: '
        "SaveStrategy.STEPS"
    )
    assert (a.kind, a.target, a.constraint, a.when) == (
        "requires",
        "save_strategy",
        "== eval_strategy",
        "load_best_model_at_end",
    )


def test_only_when() -> None:
    a = one(
        "--dataloader_prefetch_factor can only be set when data is loaded in a different process, "
        "i.e. when "
        "--dataloader_num_workers > 0."
    )
    assert (a.kind, a.target, a.when, a.constraint) == (
        "requires",
        "dataloader_num_workers",
        "dataloader_prefetch_factor",
        "> 0",
    )


def test_requires_on_trainer_method() -> None:
    a = one("Trainer: training requires a train_dataset.")
    assert (a.kind, a.target, a.owner) == ("pass", "train_dataset", "Trainer")


def test_pass_through() -> None:
    a = one(
        "To use hyperparameter search, you need to pass your model through a model_init function."
    )
    assert (a.kind, a.target) == ("pass", "model_init")


def test_pass_a_and_b_together() -> None:
    advice = parse_advice(
        "You must pass a model and an optimizer together to `accelerate.prepare()"
        "` when using MS-AMP."
    )
    assert [(a.kind, a.target, a.owner) for a in advice] == [
        ("pass", "model", "accelerate.prepare()"),
        ("pass", "optimizer", "accelerate.prepare()"),
    ]


# ---- rename / remove / call / install


def test_deprecated_use_instead() -> None:
    a = one(
        "`gradient_checkpointing` is deprecated and will be removed in v6. Use "
        "`activation_checkpointing` instead."
    )
    assert (a.kind, a.target, a.value) == (
        "rename",
        "gradient_checkpointing",
        "activation_checkpointing",
    )


def test_deprecated_exclamation() -> None:
    a = one("`torch_dtype` is deprecated! Use `dtype` instead!")
    assert (a.kind, a.target, a.value) == ("rename", "torch_dtype", "dtype")


def test_deprecated_value_is_set() -> None:
    a = one(
        "`loss_type='chunked_nll'` is deprecated and will be removed in v2.0.0. Use "
        "`loss_type='nll'` (the "
        "default), which computes the loss the same way, without materializing the full logits."
    )
    assert (a.kind, a.target, a.value) == ("set", "loss_type", "nll")


def test_renamed_to() -> None:
    a = one(
        "The `bfd-requeue` packing strategy has been renamed to `bfd_split`. Please update your "
        "configuration "
        "accordingly. The `bfd-requeue` strategy is deprecated and will be removed in v2.0.0."
    )
    assert (a.kind, a.target, a.value) == ("rename", "bfd-requeue", "bfd_split")


def test_migrate_pairs() -> None:
    advice = parse_advice(
        "Detected legacy dataset columns `chosen_input_ids`/`rejected_input_ids`; they are "
        "deprecated "
        "and will not be supported in v1. Please migrate to `chosen_ids`/`rejected_ids`."
    )
    assert [(a.kind, a.target, a.value) for a in advice] == [
        ("rename", "chosen_input_ids", "chosen_ids"),
        ("rename", "rejected_input_ids", "rejected_ids"),
    ]


def test_did_you_mean() -> None:
    a = one(
        "AttributeError: module 'datasets' has no attribute 'load_datset'. Did you mean: "
        "'load_dataset'?"
    )
    assert (a.kind, a.target, a.value) == ("rename", "load_datset", "load_dataset")


def test_remove_value_from_list() -> None:
    a = one(
        "Applying a PEFT adapter to `lm_head` is not supported: the log-probabilities are computed "
        "from "
        "`lm_head.weight` directly, so the adapter would never be trained. Remove `'lm_head'` from "
        "your "
        "`target_modules`."
    )
    assert (a.kind, a.target, a.value) == ("remove", "target_modules", "lm_head")


def test_do_not_set() -> None:
    a = one(
        "/models/x does not appear to have a file named model.safetensors or "
        "model.safetensors.index.json and "
        "thus cannot be loaded with `safetensors`. Please do not set `use_safetensors=True`."
    )
    assert (a.kind, a.target, a.value) == ("remove", "use_safetensors", True)


def test_set_it_in_only_one_place() -> None:
    a = one(
        "You set `quantization_config` both as a trainer argument and in `args.model_init_kwargs`. "
        "Please set it "
        "in only one place, preferably as a trainer argument."
    )
    assert (a.kind, a.target, a.owner) == ("remove", "quantization_config", "model_init_kwargs")


def test_call_method() -> None:
    a = one(
        "Using `.filter` on a dataset with attached indexes is not allowed. You can first run "
        "`.drop_index() to "
        "remove your index and then re-add it.`"
    )
    assert (a.kind, a.target) == ("call", "drop_index")


def test_install_is_not_an_edit() -> None:
    advice = parse_advice(
        "Prefix tuning requires `peft>=0.18.0` when the model is loaded with a device map. Upgrade "
        "peft, or load the model with `device_map=None`."
    )
    kinds = {(a.kind, a.target) for a in advice}
    assert ("install", "peft>=0.18.0") in kinds and ("set", "device_map") in kinds


# ---- no advice / templates / helpers


@pytest.mark.parametrize(
    "message",
    [
        "Setting num_proc from 4 back to 1 for the train split to disable multiprocessing as it "
        "only contains one shard.",
        "'TrainingArguments' object has no attribute 'generation_config'",
        "You set `assistant_only_loss=True`, but the dataset is not conversational.",
        "",
    ],
)
def test_descriptions_give_nothing(message: str) -> None:
    assert parse_advice(message) == ()


def test_template_placeholders() -> None:
    a = one("`{}` is deprecated and will be removed in v6. Use `{}` instead.")
    assert (a.kind, a.target, a.value) == ("rename", "{}", "{}")



# ---- contracts: what a function returns, what the data must be


def test_make_sure_function_returns() -> None:
    a = one(
        "Provided `function` which is applied to all elements of table returns a variable of "
        "type <class 'int'>. Make sure provided `function` returns a variable of type `dict` "
        "(or a pyarrow table) to update the dataset or `None` if you are only interested in "
        "side effects."
    )
    assert (a.kind, a.target) == ("set", "function")
    assert a.constraint == "return a variable of type `dict` (or a pyarrow table)"


def test_make_sure_phrase_returns() -> None:
    a = one(
        "The reward function 'short' returned 1 rewards, but 2 were expected (one per "
        "prompt-completion pair). Make sure the reward function returns exactly one reward "
        "per completion."
    )
    assert (a.kind, a.target, a.constraint) == (
        "set", "reward_function", "return exactly one reward per completion")


def test_must_return() -> None:
    a = one("rollout_func must return keys ['completion_ids', 'logprobs'] in its output dict.")
    assert (a.kind, a.target) == ("set", "rollout_func")
    assert a.constraint is not None and a.constraint.startswith("return keys")


def test_requires_that_be() -> None:
    a = one(
        "This collator requires that sequence lengths be even to create a leakage-free "
        "perm_mask. Please see relevant comments in source code for details."
    )
    assert (a.kind, a.target, a.constraint) == ("requires", "sequence_length", "even")


def test_requires_every_to_be() -> None:
    a = one(
        "interleave_datasets with probabilities requires every dataset that can be sampled "
        "(probability > 0) to be non-empty; datasets at indices [1] are empty."
    )
    assert (a.kind, a.target, a.constraint, a.when) == (
        "requires", "dataset", "non-empty", "interleave_datasets")


def test_avoid_using_is_remove() -> None:
    a = one(
        "Number of custom checkpoints in folder /tmp/x does not match the number of registered "
        "objects: Found checkpoints: 1 Registered objects: 0 Please make sure to only load "
        "checkpoints from folders that were created with the same set of registered objects,or "
        "avoid using `custom_checkpoint` in the filename for files in that same directory and "
        "load them in manually."
    )
    assert (a.kind, a.target) == ("remove", "custom_checkpoint")


def test_provide_one_selected_in_list() -> None:
    a = one("Column 'nope' not found in the dataset. Please provide a column selected in: "
            "['text', 'label']")
    assert alts(a) == [("set", "column", "text"), ("set", "column", "label")]


def test_expected_got_instead_is_rename() -> None:
    a = one("Expected 'XLoraConfig', got '<class 'peft.tuners.lora.config.LoraConfig'>' "
            "instead.")
    assert (a.kind, a.target, a.value) == ("rename", "LoraConfig", "XLoraConfig")


def test_subject_of_three_words() -> None:
    a = one("Unknown importance sampling level: tokens. Possible values are 'token' and "
            "'sequence'.")
    assert alts(a) == [("set", "importance_sampling_level", "token"),
                       ("set", "importance_sampling_level", "sequence")]

@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("`args.eval_strategy`", ("eval_strategy", "TrainingArguments")),
        ("--fp16", ("fp16", None)),
        ("fsdp_config['version']", ("version", "fsdp_config")),
        ("model.config.pad_token_id", ("pad_token_id", "model.config")),
    ],
)
def test_normalise_target(text: str, expected: tuple[str, str | None]) -> None:
    assert normalise_target(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("`no`", "no"),
        ("1", 1),
        ("True", True),
        ("'steps'", "steps"),
        ("None", None),
        ("{'a': 1}", {"a": 1}),
        ("{}", "{}"),
        ("1.", 1.0),
    ],
)
def test_parse_value(text: str, expected: object) -> None:
    assert parse_value(text) == expected
