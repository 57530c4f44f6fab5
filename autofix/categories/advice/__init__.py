"""Parse the advice that library error and warning messages carry into typed edits.

``parse_advice(message)`` reads a message such as::

    You have set `args.eval_strategy` to steps but you didn't pass an `eval_dataset` to
    `Trainer`. Either set `args.eval_strategy` to `no` or pass an `eval_dataset`.

and returns the edits it advises::

    (Advice(kind="either", alternatives=(
        Advice(kind="set", target="eval_strategy", value="no", owner="TrainingArguments"),
        Advice(kind="pass", target="eval_dataset", owner="Trainer"))),)

It works on real messages and on the inventory's templates (where ``{}`` stands for a
value filled in at run time: such a target or value comes back as the string ``"{}"``).
Only sentences that *advise* are read: descriptions of what the user did ("You have set
X to steps") or of what the library did by itself ("Setting num_proc to 1") give nothing.

Forms understood (``T`` a target: a backticked name, ``--flag``, ``args.x``,
``cfg['key']`` or a snake_case word; ``V`` a value: a literal, a backticked literal, a
bare word; ``T=V`` an assignment, backticked or bare, or ``'T':V``). Each has real
messages among its rule's examples (run by ``tests/test_advice_rules.py``) and in
``tests/test_advice_parse.py``:

=========================================  ==========  ========================================
form (example)                             kind        result
=========================================  ==========  ========================================
set T to V / set T=V / set both A and B    set         target T, value V (one per name)
use / pass / load the model with T=V       set         target T, value V
T should / must be (set to) V              set         target T, value V
T must be > 0 / positive / divisible by    set         constraint "> 0", "positive"...
set T to a positive / non-zero value       set         constraint "a positive value"
Expected value T >= 0; T cannot be V       set         constraint ">= 0"; "!= V"
increase / reduce / lower / change T       set         constraint "increase" / "decrease"
enable / disable T; enable both            set         value True / False
set it / this to V                         set         target: the name just before
Ensure that the `T` exists in the vocab..  set         constraint "a token in the vocabulary"
T must be one of A, B / either A or B      either      set T=A | set T=B
Supported / possible values are A and B    either      same, T from "Invalid/Unknown T"
The available ... are: [A, B] + change T   either      set T=A | set T=B (the real values)
Expected either A or a <kind>              either      set T=A | set T [a <kind>]
Either <advice>, <advice>, or <advice>     either      the parsed advices
<advice>, or <advice>                      either      same, without "either"
requires either A or B                     either      requires A | requires B
A or B, but not both / only one of them    either      remove A | remove B
At most one of A and B can be True         either      set A=False | set B=False
at least one of A or B must be set         either      specify A | specify B
A is incompatible with (providing) B       either      remove A | remove B
A cannot be passed together with B ...     either      remove A | remove B (with "use one of")
Adjust any of the aforementioned params    either      set each named T [change]
T has to / must (also) be specified        specify     target T
please specify / provide T; T is required  specify     target T
Set T first                                specify     target T
X is deprecated ... use Y (instead)        rename      target X, value Y (Y=V: kind set)
X has been renamed to Y; migrate to A/B    rename      target X, value Y (pairwise for A/B)
Did you mean: Y                            rename      target: the unknown name, value Y
use Y instead (of X) / prefer Y over X     rename      target X (or the unsupported name)
X requires T(=V) / T to be defined         requires    target T, value V, when X
X requires the a and b NOUN to match       requires    target a_NOUN, constraint "== b_NOUN"
X can only be set / used when T(=V)        requires    target T, value V, when X
Trainer: training requires a T             pass        target T, owner Trainer
pass (in) (a|an|the) T / pass A, or B      pass        target T (owner from "to O")
pass T through a model_init function       pass        target model_init
must pass a A and a B together to O        pass        one per name, owner O
remove / unset / drop / omit T (in O)      remove      target T, owner O
remove V from T                            remove      target T, value V
do not set T(=V) / don't pass T            remove      target T, value V
set it in only one place, preferably as P  remove      target T, owner: the other place
You can only pass one X in `T`             remove      target T, value X [keep one]
run / call `x.f()` (first); merge and ..   call        target f / merge_and_unload
make sure T returns X / T must return X    set         target T, constraint "return X"
X requires that T be V                     requires    target T, constraint V, when X
X requires every T (that ...) to be V      requires    target T, constraint V, when X
avoid using T                              remove      target T
provide a T selected in: [A, B]            either      set T=A | set T=B
Expected A, got B instead                  rename      target B, value A
pip install P / upgrade P / ensure P is..  install     target P (never a script edit)
=========================================  ==========  ========================================

``owner`` is taken when the message names it: "in `TrainingArguments`", "to `Trainer`",
"in the `SFTConfig`", "via the TrainingArguments", ``GRPOConfig(max_steps=...)``,
``args.x`` (TrainingArguments), ``model.config.x``, ``fsdp_config['x']``, "to
`from_pretrained`", "in DeepSpeed config" (``deepspeed_config``), or, failing that, where
the message names the same target elsewhere ("pass an `eval_dataset` to `Trainer`").

Besides the kinds that name a change (``set``, ``either``, ``specify``, ``rename``,
``requires``, ``pass``) there are ``remove`` (take an argument out), ``call`` (call a method
first) and ``install`` (an environment change, never a script edit). Besides ``target``,
``value``, ``alternatives`` and ``owner``, an :class:`Advice` has ``when`` (the setting the
advice is conditional on: "--load_best_model_at_end requires ..." gives
``when="load_best_model_at_end"``), ``constraint`` (a requirement that is not a literal
value: ``"> 0"``, ``"a positive value"``, ``"divisible by 4"``), ``has_value`` (True when
the message names the value, so that a named ``None`` differs from no value), ``text`` (the
words of the message it was read from) and ``form`` (the rule that matched, for statistics;
not compared).


Each form is one declared :class:`~autofix.categories.advice.parser.Rule` (its pattern, the
advice it builds, the real messages it must parse), listed in :data:`RULES` in the order
the matcher tries them (a span an earlier rule took is not read again); the rules live by
family (``setting``, ``either``, ``requires``, ``renames``, ``removal``, ``conflicts``,
``calls``, ``contracts``) and are written with the grammar of ``text``.

Adding a form: write its pattern with the grammar of ``text`` (a target is ``{T}``, a
protected token ``{TOK_RX}``), a builder that reads the match into an :class:`Advice`
through the parser's readers (``p.tgt`` a target with its owner and value, ``p.val`` a
value or constraint, ``p.owner_near`` the owner named after it, ``p.mk`` the advice, with
its words), and at least one real message as an :class:`Example`; declare the
:class:`Rule` in its family module and place it in :data:`RULES` before the rules whose
spans it must win.

Imports: autofix.categories.advice (its own modules) only: standard library (``re``,
``ast``); the messages are text, no library is imported.
"""

from __future__ import annotations

from autofix.categories.advice.calls import CALL, INSTALL
from autofix.categories.advice.conflicts import CONFLICT, MISC
from autofix.categories.advice.contracts import CONTRACT
from autofix.categories.advice.either import NAMES, ONE_OF
from autofix.categories.advice.model import KINDS, Advice, normalise_target, parse_value
from autofix.categories.advice.parser import Example, Parser, Rule
from autofix.categories.advice.removal import PASS, REMOVE
from autofix.categories.advice.renames import RENAMED, REPLACED
from autofix.categories.advice.requires import REQUIRES, SPECIFY
from autofix.categories.advice.setting import ADJUST, MUST_BE, SET

__all__ = ["Advice", "Example", "KINDS", "RULES", "Rule", "normalise_target", "parse_advice",
           "parse_value"]

#: Every rule, in the order the matcher tries them on a sentence.
RULES: tuple[Rule, ...] = (
    *RENAMED,
    *ONE_OF,
    *NAMES,
    *SET,
    *REPLACED,
    *REMOVE,
    *SPECIFY,
    *MUST_BE,
    *REQUIRES,
    *ADJUST,
    *MISC,
    *CONFLICT,
    *CALL,
    *PASS,
    *CONTRACT,
    *INSTALL,
)


def parse_advice(message: str) -> tuple[Advice, ...]:
    """The advice a library message gives, as typed edits (empty when it gives none)."""
    if not message or not message.strip():
        return ()
    return Parser(message, RULES).parse()
