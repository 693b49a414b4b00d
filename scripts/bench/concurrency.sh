#!/usr/bin/env bash
# Concurrent searches while an ingestion job runs, against the worker scripts/dev.sh runs (workerd,
# local D1 + Queues, hash embedder): no errors, throughput ≥ 0.8× sequential, ingestion under that
# load ≥ 70% of idle; p50/p95 of both. Locally one isolate serves everything (see docs/scaling.md
# for how production spreads the load).
#
#   scripts/bench/concurrency.sh [--tree DIR] [--files N] [--concurrency 32] [--searches N]
#   SEARCH_CONCURRENCY=N scripts/bench/concurrency.sh   the worker's searches per isolate (default 2)
#   KEYWORD_INDEX_CACHE_MB=0 scripts/bench/concurrency.sh   keyword queries through FTS5 only (no copies)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"
bash scripts/build-worker.sh --fast --if-stale
node scripts/bench/concurrency.mjs "$@"
