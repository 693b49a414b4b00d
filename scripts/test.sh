#!/usr/bin/env bash
# The one test command: installs what is missing, then runs the test steps (scripts/test.d/*.sh).
#
#   scripts/test.sh              every step, in order (CI: .ci/run)
#   scripts/test.sh rust e2e     only these steps: docs, rust, fuzz, wasm, embed, e2e, preview, deploy
#
# Each step prints its duration; a summary of all of them ends the run. The preview and fuzz steps
# run beside the e2e step when it is chosen (EDGERAG_SERIAL_STEPS=1: every step in order).
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

# in_list WORD [ITEM...]: whether WORD is one of the items.
in_list() {
  local word="$1" n
  shift
  for n in "$@"; do [ "$n" = "$word" ] && return 0; done
  return 1
}
is_chosen() { in_list "$1" "${chosen[@]}"; }

# Side steps: when the e2e step runs, the preview step (browser test) and the fuzz step run beside
# it, one after the other, from the same worker build (made first, so nothing rebuilds it while
# the e2e tests run from it). The e2e tests mostly wait on workerd (queues, timers), so on 2 cores
# the side steps' builds and runs fit in that waiting. Each side line is prefixed with its step; a
# side step's own exit status decides. EDGERAG_SERIAL_STEPS=1 runs every step in order instead.
# The preview's wasm is built before the e2e step too: `wrangler dev` reloads every running worker
# when its assets directory (public/) changes, which resets the isolates the e2e tests measure and
# drops the queue work in flight.
side_steps=()
if is_chosen e2e && [ "${EDGERAG_SERIAL_STEPS:-0}" != 1 ]; then
  for name in preview fuzz; do
    is_chosen "$name" && side_steps+=("$name")
  done
fi
is_side() { in_list "$1" ${side_steps[@]+"${side_steps[@]}"}; }

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
  is_side "$name" && continue
  t=$SECONDS
  if [ "$name" = e2e ] && [ ${#side_steps[@]} -gt 0 ]; then
    bash "$EDGERAG_ROOT/scripts/build-worker.sh" --fast --test-hooks --if-stale
    if is_side preview; then bash "$EDGERAG_ROOT/scripts/build-preview.sh"; fi
    (
      set -o pipefail
      for s in "${side_steps[@]}"; do
        run_step "$s" 2>&1 | sed -u "s/^/[$s] /"
      done
    ) &
    side=$!
    run_step e2e
    if ! wait "$side"; then
      side=
      log "a side step failed (${side_steps[*]}, beside e2e)"
      exit 1
    fi
    side=
    summary+=", e2e with ${side_steps[*]} beside it $((SECONDS - t)) s"
    continue
  fi
  run_step "$name"
  summary+=", $name $((SECONDS - t)) s"
done
log "steps: $summary"
log "all chosen tests passed in $((SECONDS - started)) s (${chosen[*]})"
