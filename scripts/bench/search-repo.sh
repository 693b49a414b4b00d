#!/usr/bin/env bash
# Search latency on a real repository with its code graph: a tree from the machine indexed in
# workerd (local D1 + Queues, hash embedder), then `balanced` searches one at a time; p50 / p95 and
# the worker's mean time per module. Uses the worker scripts/dev.sh runs.
#
#   scripts/bench/search-repo.sh [--tree DIR] [--files N] [--queries N]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"
bash scripts/build-worker.sh --fast --if-stale
node scripts/bench/search-repo.mjs "$@"
