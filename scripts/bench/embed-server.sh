#!/usr/bin/env bash
# Benchmark: local embedding server throughput (texts/s) at batches of 1, 8, 32 chunks of ≈ 200
# tokens, with the optimized embed-server profile. Two layers are measured:
#   1. the model in-process (divan bench, crates/embed-server/benches/embed.rs);
#   2. the HTTP server end to end (POST /v1/embeddings on a private port), what the worker sees.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"
bash scripts/setup.d/40-model.sh
log "divan: model in-process (malloc settings of scripts/embed-server.sh)"
GLIBC_TUNABLES="glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824" cargo bench --profile embed-server --manifest-path crates/embed-server/Cargo.toml --target-dir "$EDGERAG_ROOT/target" --bench embed

port="${BENCH_EMBED_PORT:-18788}"
EMBED_SERVER_PORT="$port" bash scripts/embed-server.sh --build
bin="$EDGERAG_ROOT/target/embed-server/edgerag-embed-server"
GLIBC_TUNABLES="glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824" "$bin" --addr "127.0.0.1:$port" 2>/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 240); do curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.25; done
log "HTTP: POST /v1/embeddings"
node scripts/bench/embed-server.mjs "$port"
