#!/usr/bin/env bash
# Benchmark: the exact local vector index (D1 `local_vectors`) inside workerd. Loads N random unit
# vectors of 384 dims through the test route, then times topK=10 queries (with and without a
# filter), from the isolate's in-memory copy and by scanning D1 (LOCAL_INDEX_CACHE_MB=0), reporting
# the first query after the load (which builds the copy), p50/p95 as measured inside the worker and
# over HTTP, the wasm heap size and workerd's peak RSS (VmHWM). Sizes: BENCH_SIZES (default "10000 50000"), BENCH_QUERIES (default 30).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"
bash scripts/build-worker.sh --fast --test-hooks --if-stale
BENCH_SIZES="${BENCH_SIZES:-10000 50000}" BENCH_QUERIES="${BENCH_QUERIES:-30}" node scripts/bench/vector-index.mjs
