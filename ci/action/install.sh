#!/usr/bin/env bash
# Step 1 of action.yml: install sched-reader (SR_VERSION from PyPI, else the action's own checkout).
# SR_DRY_RUN=1 prints the command instead of running it (used by the tests).
set -euo pipefail
py="${SR_PYTHON:-python3}"
if [ -n "${SR_VERSION:-}" ]; then
  target="sched-reader==${SR_VERSION#v}"
else
  target="${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set}"
fi
cmd=("$py" -m pip install --disable-pip-version-check --quiet "$target")
if [ -n "${SR_DRY_RUN:-}" ]; then
  printf '%q ' "${cmd[@]}"; echo
else
  "${cmd[@]}"
  sched-reader --version
fi
