# Hostile submission: writes outside its copy by absolute path: into the repository's .git
# and work tree, and a file in the host's temporary folder.
results = []
for name, path in (("git", "@REPO@/.git/HACKED"), ("ref", "@REPO@/.git/refs/heads/main"),
                   ("tree", "@REPO@/sub/HACKED.txt"), ("tmp", "@HOST_FILE@")):
    try:
        with open(path, "w") as fh:
            fh.write("0" * 40 + "\n")
        results.append(f"{name}: written")
    except OSError as exc:
        results.append(f"{name}: {type(exc).__name__} errno {exc.errno}")
with open("next_to_me.txt", "w") as fh:  # its own (throwaway) folder stays writable
    fh.write("fine")
print("; ".join(results))
