"""Generate the small LLM fine-tuning sets (stdlib only, deterministic, no downloads).

Three files, all templated so that a tiny causal LM (scripts/make_tiny_llm.py) visibly
learns within ~30 optimizer steps:

  instructions.jsonl  200 rows {"prompt", "completion", "text"}: prompt-completion rows
                      (TRL's "prompt-completion" format) and the same row as one "text"
                      (TRL's "language modeling" format, text = prompt + completion);
  chat.jsonl          200 rows {"messages": [{"role", "content"}, ...]} (TRL's
                      "conversational" format), a quarter with a system message;
  preference.jsonl    100 rows {"prompt", "chosen", "rejected"} (TRL's "preference"
                      format, implicit prompt given explicitly).

Tasks: small sums, copying a list of words, the capital of an invented country (a fixed
table, so the answer is learnable), and the opposite of a word.

Run:  python make_llm_data.py   (writes the three .jsonl files next to this file)
"""

import json
import random
from pathlib import Path

SEED = 2024
N_INSTRUCTIONS = 200
N_CHAT = 200
N_PREFERENCE = 100

#: Invented countries and their capitals (nothing a real model could know).
CAPITALS = {
    "Zorvania": "Velmor",
    "Quelland": "Ostrid",
    "Bramoria": "Kelsa",
    "Tirnakia": "Dunmere",
    "Olvesta": "Prasko",
    "Marundi": "Feltor",
    "Skelvia": "Arnholm",
    "Pentorra": "Lisvane",
    "Grendal": "Hobrik",
    "Valdoro": "Semmet",
    "Ustrelia": "Karbeck",
    "Norvasse": "Timbrel",
}
WORDS = ["apple", "river", "stone", "cloud", "tiger", "lamp", "green", "piano", "window",
         "candle", "forest", "mirror", "sugar", "violin", "garden", "rocket"]
OPPOSITES = {"hot": "cold", "big": "small", "fast": "slow", "up": "down", "light": "dark",
             "open": "closed", "early": "late", "happy": "sad", "full": "empty",
             "old": "new", "high": "low", "wet": "dry"}
SYSTEM = "You are a helpful assistant. Answer in one short line."


def task(rng: random.Random) -> tuple[str, str, str]:
    """One (question, right answer, wrong answer) triple."""
    kind = rng.randrange(4)
    if kind == 0:
        a, b = rng.randint(0, 20), rng.randint(0, 20)
        offset = rng.choice([1, 2, 3])
        wrong = a + b - offset if a + b >= offset and rng.random() < 0.5 else a + b + offset
        return f"What is {a} + {b}?", str(a + b), str(wrong)
    if kind == 1:
        words = rng.sample(WORDS, rng.randint(2, 4))
        shuffled = words[1:] + words[:1]
        return f"Repeat: {' '.join(words)}", " ".join(words), " ".join(shuffled)
    if kind == 2:
        country = rng.choice(sorted(CAPITALS))
        other = rng.choice([c for c in sorted(CAPITALS) if c != country])
        return f"What is the capital of {country}?", CAPITALS[country], CAPITALS[other]
    word = rng.choice(sorted(OPPOSITES))
    return f"What is the opposite of {word}?", OPPOSITES[word], word


def instruction_rows(rng: random.Random) -> list[dict]:
    rows = []
    for _ in range(N_INSTRUCTIONS):
        question, answer, _wrong = task(rng)
        prompt = f"Question: {question}\nAnswer:"
        completion = f" {answer}"
        rows.append({"prompt": prompt, "completion": completion, "text": prompt + completion})
    return rows


def chat_rows(rng: random.Random) -> list[dict]:
    rows = []
    for i in range(N_CHAT):
        question, answer, _wrong = task(rng)
        messages = [{"role": "system", "content": SYSTEM}] if i % 4 == 0 else []
        messages += [{"role": "user", "content": question},
                     {"role": "assistant", "content": answer}]
        rows.append({"messages": messages})
    return rows


def preference_rows(rng: random.Random) -> list[dict]:
    rows = []
    for _ in range(N_PREFERENCE):
        question, answer, wrong = task(rng)
        rows.append({"prompt": f"Question: {question}\nAnswer:", "chosen": f" {answer}",
                     "rejected": f" {wrong}"})
    return rows


def write(path: Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def main() -> None:
    here = Path(__file__).parent
    write(here / "instructions.jsonl", instruction_rows(random.Random(SEED)))
    write(here / "chat.jsonl", chat_rows(random.Random(SEED + 1)))
    write(here / "preference.jsonl", preference_rows(random.Random(SEED + 2)))


if __name__ == "__main__":
    main()
