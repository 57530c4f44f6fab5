#!/usr/bin/env bash
# The test command: set up both environments, then ruff, mypy and the whole test suite
# (real torch/transformers/datasets on CPU, offline). .ci/run calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1
.venv/bin/ruff check autofix recipes
.venv/bin/mypy autofix recipes
.venv/bin/python -m pytest -q "$@"
