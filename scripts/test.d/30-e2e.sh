#!/usr/bin/env bash
# End-to-end tests: builds the worker once (release, no wasm-opt; skipped when up to date), then
# runs every tests/e2e/*.test.mjs with node:test against the worker in workerd (wrangler dev,
# local D1 + Queues). Each test file starts its own worker instance on free ports.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"
bash scripts/build-worker.sh --fast --test-hooks --if-stale
shopt -s nullglob
files=(tests/e2e/*.test.mjs)
if [ ${#files[@]} -eq 0 ]; then
  log "no e2e tests found"
  exit 0
fi
# Two files at a time (each starts its own workerd on free ports with its own state): most of a
# file's time is spent waiting on queues and timers, so two overlap well even on 2 cores.
node --test --test-concurrency="${E2E_CONCURRENCY:-2}" --test-reporter=spec "${files[@]}"
