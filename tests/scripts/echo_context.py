"""Reports what it sees (argv, __file__, cwd, __name__), then fails on a known line."""
import json
import os
import sys

print(json.dumps({"argv": sys.argv, "file": __file__, "cwd": os.getcwd(), "name": __name__}))
raise ValueError("boom at line 7")
