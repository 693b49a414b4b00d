#!/usr/bin/env bash
# Doc→code retrieval quality (CodeSearchNet style) on sources found on this machine at run time:
# cargo registry crates, the Python standard library, node_modules. Prints Recall@1/5/10, MRR@10
# and hit-within-1k/4k-tokens for 100-line windows vs edgerag's chunker, BM25 vs dense vs hybrid,
# and the default pipeline with / without each post-retrieval module; writes
# target/bench-retrieval/results.{md,json}. Embeddings come from the local MiniLM server (started
# in the background when none answers) and are cached in target/bench-retrieval/.
#
#   scripts/bench/retrieval.sh [--files-per-language 100] [--queries-per-language 100] [--no-embed]
#   EMBED_URL=http://127.0.0.1:8790/v1 scripts/bench/retrieval.sh     # another embedding server
#   SWEEP=1 scripts/bench/retrieval.sh                                # + RRF weight / k sweep
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"
url="${EMBED_URL:-http://127.0.0.1:8788/v1}"
if ! curl -fsS --max-time 2 "${url%/v1}/health" >/dev/null 2>&1 && [ -z "${EMBED_URL:-}" ]; then
  log "no embedding server at $url: starting scripts/embed-server.sh --background"
  bash scripts/embed-server.sh --background || log "could not start it: BM25 rows only"
fi
cargo build --release -q -p edgerag-search --features bench --bench retrieval_quality
bin="$(ls -t target/release/deps/retrieval_quality-* | grep -v '\.d$' | head -1)"
exec "$bin" --embed-url "$url" --files-per-language 100 --queries-per-language 100 "$@"
