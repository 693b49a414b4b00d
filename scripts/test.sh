#!/usr/bin/env bash
# The one test command: installs what is missing, then runs every test suite (scripts/test.d/*).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
started=$SECONDS
bash "$EDGERAG_ROOT/scripts/setup.sh"
log "setup: $((SECONDS - started)) s"
for step in "$EDGERAG_ROOT"/scripts/test.d/*.sh; do
  log "test step: $(basename "$step")"
  t=$SECONDS
  bash "$step"
  log "test step $(basename "$step") passed in $((SECONDS - t)) s"
done
log "all tests passed in $((SECONDS - started)) s"
