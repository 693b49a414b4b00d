#!/usr/bin/env bash
# The one test command: installs what is missing, then runs the test steps (scripts/test.d/*.sh).
#
#   scripts/test.sh              every step, in order (CI: .ci/run)
#   scripts/test.sh rust e2e     only these steps: rust, wasm, embed, e2e, preview
#
# Each step prints its duration; a summary of all of them ends the run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

# Step name = file name without its order prefix and extension (10-rust.sh → rust).
declare -A step_file=()
names=()
for file in "$EDGERAG_ROOT"/scripts/test.d/*.sh; do
  name="$(basename "$file" .sh)"
  name="${name#*-}"
  step_file[$name]="$file"
  names+=("$name")
done

chosen=()
if [ $# -eq 0 ]; then
  chosen=("${names[@]}")
else
  for arg in "$@"; do
    if [ -z "${step_file[$arg]+x}" ]; then
      echo "scripts/test.sh: unknown step '$arg' (steps: ${names[*]})" >&2
      exit 2
    fi
  done
  # Run in the canonical order whatever the order given.
  for name in "${names[@]}"; do
    for arg in "$@"; do
      if [ "$arg" = "$name" ]; then
        chosen+=("$name")
        break
      fi
    done
  done
fi

started=$SECONDS
bash "$EDGERAG_ROOT/scripts/setup.sh"
summary="setup $((SECONDS - started)) s"
log "setup: $((SECONDS - started)) s"
for name in "${chosen[@]}"; do
  log "test step: $name"
  t=$SECONDS
  bash "${step_file[$name]}"
  log "test step $name passed in $((SECONDS - t)) s"
  summary+=", $name $((SECONDS - t)) s"
done
log "steps: $summary"
log "all chosen tests passed in $((SECONDS - started)) s (${chosen[*]})"
