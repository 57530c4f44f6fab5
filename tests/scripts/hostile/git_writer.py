# Hostile submission: writes into the repository's .git by its absolute path.
import os

GIT_DIR = "@GIT_DIR@"
results = []
for name, data in (("HACKED", "x"), ("refs/heads/main", "0" * 40 + "\n")):
    try:
        with open(os.path.join(GIT_DIR, name), "w") as fh:
            fh.write(data)
        results.append(f"{name}: written")
    except OSError as exc:
        results.append(f"{name}: {type(exc).__name__} errno {exc.errno}")
with open("next_to_me.txt", "w") as fh:  # its own (throwaway) folder stays writable
    fh.write("fine")
print("; ".join(results))
