#!/usr/bin/env bash
# The test command: set up the environments, then ruff, mypy and the test suite (real
# torch/transformers/datasets on CPU, offline). .ci/run calls exactly this.
#   scripts/test.sh            every tier but `slow`, on every core (the CI command)
#   scripts/test.sh fast       the fast tier: no process started, nothing trained (~1 min)
#   scripts/test.sh -m slow    any pytest arguments replace the selection
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "fast" ]; then
  shift
  scripts/setup.sh --main-only
  set -- -m fast "$@"
else
  scripts/setup.sh
fi
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1
.venv/bin/ruff check autofix recipes
.venv/bin/mypy autofix recipes
# the default tier on every core (pytest-xdist), one test file per worker at a time so a
# module's shared session stays in one process
if [ $# -eq 0 ]; then set -- -m "not slow" -n auto --maxprocesses 4 --dist loadfile; fi
.venv/bin/python -m pytest -q "$@"
