#!/usr/bin/env bash
# Installs everything edgerag needs for development and tests, pinned, skipping what is present.
# Each step is a file in scripts/setup.d/, run in name order. Safe to run any number of times.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
for step in "$EDGERAG_ROOT"/scripts/setup.d/*.sh; do
  bash "$step"
done
log "setup complete"
