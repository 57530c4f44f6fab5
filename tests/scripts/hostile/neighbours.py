# Hostile submission: looks for the other submissions' throwaway copies and runs next to its
# own (in the folder that holds its copy) and prints how many it sees.
import glob
import os

temp = os.path.dirname(os.path.dirname(os.path.dirname(os.getcwd())))  # .../sandbox/tree/sub
copies = glob.glob(os.path.join(temp, "autofix-sandbox-*"))
runs = glob.glob(os.path.join(temp, "autofix-run-*"))
others = [p for c in copies for p in glob.glob(os.path.join(c, "tree", "sub", "*.py"))
          if not p.startswith(os.path.dirname(os.getcwd()))]
print(f"copies {len(copies)}, runs {len(runs)}, other copies' scripts {len(others)}")
