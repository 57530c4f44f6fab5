#!/usr/bin/env bash
# Builds the two environments from the project's own files (idempotent):
#   .venv     autofix + its dev tools + the transformers 5 training stack + Ray (pyproject
#             extras)
#   .venv-v4  a second training environment with transformers 4.57, TensorFlow and
#             tf-keras (envs/v4.txt), which autofix reaches through --python
#   .venv-old transformers 4.40 (envs/old.txt), for the API-drift renames run backwards
# Usage: scripts/setup.sh [--main-only]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
quiet() { "$@" 2> >(grep -v "^WARNING: Location" >&2); }

[ -x .venv/bin/python ] || "$PY" -m venv .venv
quiet .venv/bin/python -m pip install -q --disable-pip-version-check -e ".[train,ray,dev]"
if [ "${1:-}" != "--main-only" ]; then
  [ -x .venv-v4/bin/python ] || "$PY" -m venv .venv-v4
  quiet .venv-v4/bin/python -m pip install -q --disable-pip-version-check -r envs/v4.txt
  [ -x .venv-old/bin/python ] || "$PY" -m venv .venv-old
  quiet .venv-old/bin/python -m pip install -q --disable-pip-version-check -r envs/old.txt
fi
