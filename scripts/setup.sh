#!/usr/bin/env bash
# Builds the environments from the project's own files (idempotent), saying what it does:
#   .venv     autofix + its dev tools + the transformers 5 training stack (with TRL and
#             PEFT) + Ray (pyproject extras)
#   .venv-v4  a second training environment with transformers 4.57, TensorFlow and
#             tf-keras (envs/v4.txt), which autofix reaches through --python
#   .venv-old transformers 4.40 (envs/old.txt), for the API-drift renames run backwards
#   chromium  (Debian package) for the tests that render the HTML reports headless
#   bubblewrap (Debian package) which isolates `autofix batch --sandbox` runs (their files,
#             network and processes); without it --sandbox says what is not isolated and
#             --require-isolation refuses to run
#   the two Debian packages with the full set-up only: --main-only installs nothing
#   outside the project's folder
# Usage: scripts/setup.sh [--main-only]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
quiet() { "$@" 2> >(grep -v "^WARNING: Location" >&2); }
step() { printf '[setup %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
install() {  # install VENV WHAT STAMP-FILES PIP-ARGS...
  local venv=$1 what=$2 files=$3
  shift 3
  [ -x "$venv/bin/python" ] || { step "creating $venv"; "$PY" -m venv "$venv"; }
  # what the environment was built from: when it has not changed, pip is not asked again
  local stamp
  stamp=$(cat $files | sha256sum | cut -c1-16)-$(printf '%s ' "$@" | sha256sum | cut -c1-16)
  if [ "$(cat "$venv/.autofix-setup" 2>/dev/null)" = "$stamp" ]; then
    step "$venv: up to date ($what)"
    return
  fi
  step "$venv: installing $what (a few minutes on a fresh machine)"
  # bytecode is compiled at install (pip's default): with PYTHONDONTWRITEBYTECODE set, as on
  # CI, nothing compiled later is kept, and every run would compile torch and transformers
  quiet "$venv/bin/python" -m pip install -q --disable-pip-version-check "$@"
  echo "$stamp" > "$venv/.autofix-setup"
  step "$venv: done"
}

# the main environment and the two others side by side (a fresh machine: each install
# waits on downloads and unpacking as much as on a core)
install .venv "autofix, ruff, mypy, pytest, jsonschema, matplotlib, Ray, torch 2.13 CPU, transformers 5, datasets, TRL, PEFT" \
  pyproject.toml -e ".[train,llm,ray,dev]" &
main=$!
others=""
if [ "${1:-}" != "--main-only" ]; then
  { install .venv-v4 "transformers 4.57, torch, TensorFlow 2.21, tf-keras (envs/v4.txt)" \
      envs/v4.txt -r envs/v4.txt
    install .venv-old "transformers 4.40 (envs/old.txt)" envs/old.txt -r envs/old.txt; } &
  others=$!
fi
stop() { for pid in "$@"; do pkill -TERM -P "$pid" 2>/dev/null; kill "$pid" 2>/dev/null; done; true; }
trap 'stop $main $others; exit 130' INT TERM
status=0
wait "$main" || status=$?
if [ -n "$others" ]; then
  if [ "$status" -ne 0 ]; then stop "$others"; fi
  others_status=0
  wait "$others" || others_status=$?
  [ "$status" -ne 0 ] || status=$others_status
fi
trap - INT TERM
[ "$status" -eq 0 ] || { step "an environment failed to install (see the pip error above)"; exit "$status"; }

if [ "${1:-}" = "--main-only" ]; then
  exit 0  # nothing outside the project's folder: the Debian packages come with the full set-up
fi
debian_package() {  # debian_package PACKAGE COMMAND WHAT-IS-MISSING-WITHOUT-IT
  local package=$1 command=$2 without=$3
  if command -v "$command" >/dev/null 2>&1; then
    step "$package: already installed"
  elif command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    step "$package: installing the Debian package (apt-get install $package)"
    if apt-get install -y -q "$package" >/dev/null 2>&1 \
        || { apt-get update -q >/dev/null && apt-get install -y -q "$package" >/dev/null; }; then
      step "$package: done"
    else
      step "$package: NOT installed: apt-get failed ($without)"
    fi
  elif command -v apt-get >/dev/null 2>&1 && command -v sudo >/dev/null 2>&1; then
    step "$package: installing the Debian package (sudo apt-get install $package)"
    if sudo apt-get install -y -q "$package" >/dev/null; then
      step "$package: done"
    else
      step "$package: NOT installed: apt-get failed ($without)"
    fi
  else
    step "$package: NOT installed and apt-get is unavailable here; install it by hand ($without)"
  fi
}
if command -v chromium-browser >/dev/null 2>&1; then
  step "chromium: already installed"
else
  debian_package chromium chromium "the tests that render the HTML reports in it are skipped without it"
fi
debian_package bubblewrap bwrap "without it \`autofix batch --sandbox\` runs are not isolated from \
the machine's files and network, and --require-isolation refuses to run"
if command -v bwrap >/dev/null 2>&1 \
    && ! bwrap --ro-bind / / --unshare-pid --unshare-net --die-with-parent true 2>/dev/null; then
  step "bubblewrap: installed, but it cannot make its namespaces on this machine (a container" \
       "or kernel without user namespaces): \`autofix batch --sandbox\` runs are not isolated here"
fi
