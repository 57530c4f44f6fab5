#!/usr/bin/env bash
# The test command: set up both environments, then ruff, mypy and the whole test suite
# (real torch/transformers/datasets on CPU, offline). .ci/run calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1
.venv/bin/ruff check autofix recipes
.venv/bin/mypy autofix recipes
# Default: every tier but the tests marked slow (see pyproject's markers); arguments replace
# the selection, e.g. scripts/test.sh -m slow, or scripts/test.sh -m "not e2e and not v4".
if [ $# -eq 0 ]; then set -- -m "not slow"; fi
.venv/bin/python -m pytest -q "$@"
