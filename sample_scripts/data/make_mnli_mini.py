"""Generate mnli_mini: a small, deterministic, MNLI-shaped NLI set (stdlib only).

Labels follow GLUE MNLI: 0 entailment, 1 neutral, 2 contradiction.
Sentences are templated so that a small pretrained encoder (MiniLM-L6) learns
the task within one short epoch:
  - entailment: the hypothesis restates part of the premise;
  - neutral: the hypothesis adds a claim the premise says nothing about;
  - contradiction: the hypothesis negates the premise, or uses an antonym.
Optional adjectives, places and times make the lengths vary, so batches that
are not padded are ragged.

Run:  python make_mnli_mini.py   (writes the two .jsonl files next to this file)
"""

import json
import random
from pathlib import Path

SEED = 1234
N_TRAIN_PER_LABEL = 400  # 1,200 rows: 75 steps of 16 per epoch
N_VALID_PER_LABEL = 50  # 150 rows

NOUNS = [
    "man",
    "woman",
    "child",
    "dog",
    "chef",
    "teacher",
    "student",
    "musician",
    "farmer",
    "doctor",
    "girl",
    "boy",
    "painter",
    "driver",
    "nurse",
    "cat",
]
ADJECTIVES = ["", "", "young", "old", "tall", "happy", "tired", "quiet", "busy", "small"]
PLACES = [
    "",
    "in the park",
    "at the beach",
    "in a small kitchen",
    "on a busy street",
    "near the old bridge",
    "inside the library",
    "in the garden",
    "at the station",
]
TIMES = ["", "", "in the morning", "after lunch", "late at night", "on a rainy afternoon"]
# (action, antonym action): the antonym contradicts the action.
ACTIONS = [
    ("is sitting on a bench", "is standing"),
    ("is running", "is sitting still"),
    ("is laughing", "is crying"),
    ("is sleeping", "is wide awake"),
    ("is eating an apple", "is not eating anything"),
    ("is reading a book", "is not reading"),
    ("is singing loudly", "is completely silent"),
    ("is walking slowly", "is running fast"),
    ("is holding an umbrella", "has empty hands"),
    ("is smiling", "is frowning"),
    ("is playing a guitar", "is not playing any instrument"),
    ("is wearing a red hat", "is bareheaded"),
]
# Claims that the premise neither supports nor rules out.
EXTRA_CLAIMS = [
    "for the first time",
    "because it is a holiday",
    "while waiting for a friend",
    "to win a prize",
    "before going to work",
    "after a long argument",
    "with a famous friend",
    "to earn some money",
]
EXTRA_FACTS = [
    "is very rich",
    "has three brothers",
    "is from another country",
    "was born in June",
    "is a famous athlete",
    "has a secret plan",
]


def noun_phrase(rng, noun):
    words = f"{rng.choice(ADJECTIVES)} {noun}".strip()
    return ("an " if words[0] in "aeiou" else "a ") + words


def sentence(*parts):
    text = " ".join(p for p in parts if p)
    return text[0].upper() + text[1:] + "."


def make_pair(rng, label):
    noun = rng.choice(NOUNS)
    action, antonym = rng.choice(ACTIONS)
    place, time = rng.choice(PLACES), rng.choice(TIMES)
    premise = sentence(noun_phrase(rng, noun), action, place, time)
    if label == 0:  # entailment: a shorter restatement
        hypothesis = rng.choice(
            [
                sentence("a", noun, action),
                sentence("someone", action, place),
                sentence("there is a", noun, place or time),
            ]
        )
    elif label == 1:  # neutral: an added, unrelated claim
        hypothesis = rng.choice(
            [
                sentence("a", noun, action, rng.choice(EXTRA_CLAIMS)),
                sentence("the", noun, rng.choice(EXTRA_FACTS)),
            ]
        )
    else:  # contradiction: negation or antonym
        hypothesis = rng.choice(
            [
                sentence("the", noun, action.replace("is ", "is not ", 1)),
                sentence("the", noun, antonym, place),
                sentence("there is no", noun, place or time),
            ]
        )
    return {"premise": premise, "hypothesis": hypothesis, "label": label}


def make_split(rng, per_label, seen):
    rows = []
    for label in (0, 1, 2):
        count = 0
        while count < per_label:
            row = make_pair(rng, label)
            key = (row["premise"], row["hypothesis"])
            if key in seen:
                continue
            seen.add(key)
            rows.append(row)
            count += 1
    rng.shuffle(rows)
    return rows


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")


def main():
    rng = random.Random(SEED)
    seen = set()  # no pair appears twice, nor in both splits
    out = Path(__file__).parent
    write_jsonl(out / "mnli_mini_train.jsonl", make_split(rng, N_TRAIN_PER_LABEL, seen))
    write_jsonl(out / "mnli_mini_validation.jsonl", make_split(rng, N_VALID_PER_LABEL, seen))


if __name__ == "__main__":
    main()
