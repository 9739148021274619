#!/usr/bin/env bash
# Step 2 of action.yml: run `sched-reader lint` with annotations on stdout (--format github) and SARIF
# to a file, record the outputs, and exit with sched-reader's own code (0 / 1 / 2) so the job fails
# on findings while a later `upload-sarif` step with `if: always()` still uploads them.
# Inputs come from the environment only (SR_PATHS, SR_VLLM, SR_FAIL_ON, SR_SARIF, SR_BASELINE, SR_CONFIG).
set -uo pipefail
args=(lint --format github)
[ -n "${SR_VLLM:-}" ] && args+=(--vllm "$SR_VLLM")
[ -n "${SR_FAIL_ON:-}" ] && args+=(--fail-on "$SR_FAIL_ON")
[ -n "${SR_BASELINE:-}" ] && args+=(--baseline "$SR_BASELINE")
[ -n "${SR_CONFIG:-}" ] && args+=(--config-file "$SR_CONFIG")
if [ -n "${SR_SARIF:-}" ]; then
  args+=(--sarif-file "$SR_SARIF")
fi
# paths: split on whitespace only (no globbing, no command substitution)
set -f
read -r -a paths <<< "${SR_PATHS:-.}"
set +f
[ "${#paths[@]}" -eq 0 ] && paths=(.)
"${SR_BIN:-sched-reader}" "${args[@]}" "${paths[@]}"
rc=$?
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  if [ -n "${SR_SARIF:-}" ] && [ -f "$SR_SARIF" ]; then
    echo "sarif-file=$SR_SARIF" >> "$GITHUB_OUTPUT"
  else
    echo "sarif-file=" >> "$GITHUB_OUTPUT"
  fi
  echo "exit-code=$rc" >> "$GITHUB_OUTPUT"
fi
exit "$rc"
