#!/usr/bin/env bash
# The one test command: installs what is missing, then runs the test steps (scripts/test.d/*.sh).
#
#   scripts/test.sh              every step, in order (CI: .ci/run)
#   scripts/test.sh rust e2e     only these steps: rust, wasm, embed, e2e, preview
#
# Each step prints its duration; a summary of all of them ends the run. When both run, the e2e and
# preview steps run side by side (EDGERAG_SERIAL_STEPS=1: one after the other).
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

is_chosen() {
  local n
  for n in "${chosen[@]}"; do [ "$n" = "$1" ] && return 0; done
  return 1
}

# The browser test (preview) runs alongside the e2e step when both are chosen: both spend most of
# their time waiting on workerd (queues, timers, the page), so on 2 cores the pair takes little more
# than the e2e step alone. They share one worker build, made first, so neither rebuilds it while the
# other runs from it. Each line is prefixed with its step; the step's own exit status decides.
alongside=
if is_chosen e2e && is_chosen preview && [ "${EDGERAG_SERIAL_STEPS:-0}" != 1 ]; then
  alongside=preview
fi

run_step() {
  local name="$1" t=$SECONDS
  log "test step: $name"
  bash "${step_file[$name]}"
  log "test step $name passed in $((SECONDS - t)) s"
}

# If the e2e step fails, stop the side step's whole process tree (node, chromium, workerd) too.
kill_tree() {
  local child
  for child in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$child"; done
  kill -TERM "$1" 2>/dev/null || true
}
side=
trap '[ -n "$side" ] && kill_tree "$side"' EXIT

started=$SECONDS
bash "$EDGERAG_ROOT/scripts/setup.sh"
summary="setup $((SECONDS - started)) s"
log "setup: $((SECONDS - started)) s"
for name in "${chosen[@]}"; do
  [ "$name" = "$alongside" ] && continue
  t=$SECONDS
  if [ "$name" = e2e ] && [ -n "$alongside" ]; then
    bash "$EDGERAG_ROOT/scripts/build-worker.sh" --fast --test-hooks --if-stale
    ( set -o pipefail; run_step "$alongside" 2>&1 | sed -u "s/^/[$alongside] /" ) &
    side=$!
    run_step e2e
    if ! wait "$side"; then
      side=
      log "test step $alongside failed (it ran alongside e2e)"
      exit 1
    fi
    side=
    summary+=", e2e + $alongside side by side $((SECONDS - t)) s"
    continue
  fi
  run_step "$name"
  summary+=", $name $((SECONDS - t)) s"
done
log "steps: $summary"
log "all chosen tests passed in $((SECONDS - started)) s (${chosen[*]})"
