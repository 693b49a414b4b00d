#!/usr/bin/env bash
# Benchmark: local embedding server throughput (texts/s) at batches of 1, 8, 32 chunks of ≈ 200
# tokens, with the optimized embed-server profile. Two layers are measured:
#   1. the model in-process (divan bench, crates/embed-server/benches/embed.rs);
#   2. the HTTP server end to end (POST /v1/embeddings on a private port), what the worker sees.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
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
node - "$port" <<'JS'
const port = process.argv[2];
const words = 'the index stores vectors for each chunk query returns nearest neighbours parse config file error handler retry queue message batch worker request response token embedding model cosine similarity function struct impl async await'.split(' ');
const text = (seed) => { let x = seed * 2654435761 % 4294967296 + 1; const w = []; for (let i = 0; i < 150; i++) { x = (x * 1103515245 + 12345) % 2147483648; w.push(words[x % words.length]); if (i % 12 === 11) w.push(';'); } return w.join(' '); };
for (const batch of [1, 8, 32]) {
  const rounds = batch === 32 ? 3 : batch === 8 ? 5 : 10;
  const input = Array.from({ length: batch }, (_, i) => text(i + 1));
  const post = () => fetch(`http://127.0.0.1:${port}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input, model: 'all-MiniLM-L6-v2' }) }).then((r) => r.json());
  const warm = await post();
  const tokens = warm.usage.prompt_tokens / batch;
  const t0 = performance.now();
  for (let r = 0; r < rounds; r++) await post();
  const ms = (performance.now() - t0) / rounds;
  console.log(`batch ${String(batch).padStart(2)}: ${ms.toFixed(1)} ms/request, ${(batch * 1000 / ms).toFixed(1)} texts/s (${tokens.toFixed(0)} tokens/text)`);
}
JS
