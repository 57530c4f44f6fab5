#!/usr/bin/env bash
# Sets up autofix and repairs the course's PyTorch script in a scratch git repo.
# Usage: scripts/demo.sh [SCRATCH_DIR]   (default: a new temporary directory; must not exist
# or be empty). The repo is SCRATCH_DIR/repo, the JSON report SCRATCH_DIR/report.json.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
scratch="${1:-$(mktemp -d -t autofix-demo-XXXXXX)}"
if [ -e "$scratch" ] && [ -n "$(ls -A "$scratch")" ]; then
  echo "error: $scratch exists and is not empty" >&2
  exit 2
fi
"$root/scripts/setup.sh" --main-only
mkdir -p "$scratch/repo"
cp -r "$root/sample_scripts/course_pt_mnli.py" "$root/sample_scripts/data" "$scratch/repo/"
cd "$scratch/repo"
git init -q -b main
git add course_pt_mnli.py data
git -c user.name="autofix demo" -c user.email=demo@localhost \
  commit -q -m "The course's MNLI script, with the course's three faults"
export HF_HUB_OFFLINE=1
status=0
"$root/.venv/bin/autofix" course_pt_mnli.py --branch fixes --report ../report.json || status=$?
echo
echo "scratch repo: $scratch/repo   report: $scratch/report.json"
git --no-pager log --format='  %h %s' main..fixes 2>/dev/null || true
echo "review with:  git -C $scratch/repo diff HEAD..fixes"
exit $status
