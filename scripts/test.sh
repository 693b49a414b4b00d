#!/usr/bin/env bash
# The one test command: installs what is missing, then runs every test suite (scripts/test.d/*).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
bash "$EDGERAG_ROOT/scripts/setup.sh"
for step in "$EDGERAG_ROOT"/scripts/test.d/*.sh; do
  log "test step: $(basename "$step")"
  bash "$step"
done
log "all tests passed"
