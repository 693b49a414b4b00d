#!/usr/bin/env bash
# Search latency in workerd: the real worker (`wrangler dev --env local`, local D1 with FTS5, the
# exact local vector index) over 50k and 200k chunks of real source found on this machine (cargo
# registry, Python stdlib, node_modules — chunked by edgerag, never copied into the repo), loaded
# straight into the local D1 file. The database also holds BENCH_OTHER_NAMESPACES (default 1) other
# namespaces of the same size: the cost of a query must follow its namespace, not the database.
# Reports the first query after start (a new isolate: its vector copy read from the namespace's
# stored snapshot, and beside it the same with the snapshot deleted, the copy built from every
# row; its keyword copy read from its snapshot after that first answer, which the first worker's
# build stored) and client-side p50/p95 for `balanced` with and without
# multi-query and with a language / path-glob filter, and each module's share of the time from the
# pipeline's own per-module timings (`debug: true`). Also checks that the in-memory BM25 and SQLite
# FTS5's bm25() rank the same data the same way.
#
#   scripts/bench/retrieval-latency.sh            sizes "50000 200000", 60 queries per request kind
#   BENCH_SIZES="50000" BENCH_QUERIES=30 scripts/bench/retrieval-latency.sh
#   BENCH_KEYWORD_INDEX=shared scripts/bench/retrieval-latency.sh   rows loaded as before namespaces had
#                                                           their own keyword index (the previous design)
#   BENCH_BUILD=deploy scripts/bench/retrieval-latency.sh   the deploy build (wasm-opt) instead of
#                                                           the one scripts/dev.sh runs
#   BENCH_BREAKDOWN=1 scripts/bench/retrieval-latency.sh    also each retriever alone (vector half only,
#                                                           keyword half only), to split retrieval.search
#   BENCH_KEEP_DB=1 scripts/bench/retrieval-latency.sh      keep the loaded SQLite file (path printed)
#   BENCH_WARMUP=10 (default)                               unmeasured requests of each kind before its
#                                                           measured ones (other queries than the measured)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"
if [ "${BENCH_BUILD:-dev}" = deploy ]; then bash scripts/build-worker.sh --if-stale; else bash scripts/build-worker.sh --fast --if-stale; fi
out="$EDGERAG_ROOT/target/bench-retrieval"
mkdir -p "$out"
sizes="${BENCH_SIZES:-50000 200000}"
for n in $sizes; do
  [ -s "$out/rows-$n.jsonl" ] && continue
  cargo build --release -q -p edgerag-search --features bench --bench retrieval_quality
  bin="$(ls -t "${CARGO_TARGET_DIR:-target}"/release/deps/retrieval_quality-* | grep -v '\.d$' | head -1)"
  "$bin" --emit-rows "$out/rows-$n.jsonl" --rows "$n" --files-per-language 400 --queries-per-language 100
done
BENCH_SIZES="$sizes" BENCH_QUERIES="${BENCH_QUERIES:-60}" BENCH_OUT="$out" node scripts/bench/retrieval-latency.mjs
