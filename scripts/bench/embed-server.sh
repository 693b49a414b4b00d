#!/usr/bin/env bash
# Benchmark: local embedding server throughput (texts/s) at batches of 1, 8, 32 chunks of ≈ 250
# tokens on the optimized embed-server profile, side by side in one run with
#   - candle's BertModel, the previous server path (divan, crates/embed-server/benches/embed.rs);
#   - onnxruntime running the same model (an ONNX graph built from the same safetensors weights,
#     f32 and dynamic int8, embed-server.onnx.py) on the same number of threads.
# Layers:
#   1. the model in-process (divan): server encoder vs candle BertModel;
#   2. the HTTP server end to end (POST /v1/embeddings on a private port), what the worker sees;
#   3. the onnxruntime anchor (pinned wheels in a venv under $EDGERAG_STATE/bench-onnx; skipped
#      with a message when they cannot be installed).
# EMBED_BENCH_THREADS (default: all cores) caps the threads of both runtimes.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"
bash scripts/setup.d/40-model.sh
here="$EDGERAG_ROOT/scripts/bench"
threads="${EMBED_BENCH_THREADS:-$(nproc)}"
words=181 # ≈ 250 word pieces with the generator's punctuation
model_dir="${EDGERAG_MODEL_DIR:-$EDGERAG_STATE/models/all-MiniLM-L6-v2}"
# The allocator settings of scripts/embed-server.sh.
malloc="glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824"
log "load: $(uptime)"

log "divan: model in-process, server encoder beside candle BertModel ($threads threads)"
GLIBC_TUNABLES="$malloc" RAYON_NUM_THREADS="$threads" cargo bench --profile embed-server \
  --manifest-path crates/embed-server/Cargo.toml --target-dir "$EDGERAG_ROOT/target" --locked --bench embed

port="${BENCH_EMBED_PORT:-18788}"
EMBED_SERVER_PORT="$port" bash scripts/embed-server.sh --build
bin="$EDGERAG_ROOT/target/embed-server/edgerag-embed-server"
GLIBC_TUNABLES="$malloc" RAYON_NUM_THREADS="$threads" "$bin" --addr "127.0.0.1:$port" 2>/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 240); do curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break; sleep 0.25; done
log "HTTP: POST /v1/embeddings"
node "$here/embed-server.mjs" "$port" "$words"

# The anchor. Pinned wheels only; nothing beyond PyPI.
venv="$EDGERAG_STATE/bench-onnx"
pins=(onnxruntime==1.20.1 onnx==1.17.0 numpy==1.26.4 tokenizers==0.21.0)
anchor_ready() { [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import onnxruntime, onnx, numpy, tokenizers" 2>/dev/null; }
if ! anchor_ready; then
  log "setting up the onnxruntime anchor ($venv: ${pins[*]})"
  { python3 -m venv "$venv" && "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: "${pins[@]}"; } || true
fi
if anchor_ready; then
  log "anchor: onnxruntime, same model and texts ($threads threads)"
  "$venv/bin/python" "$here/embed-server.onnx.py" "$model_dir" "$EDGERAG_STATE/cache/bench-onnx" "$threads" "$words" \
    "http://127.0.0.1:$port"
else
  log "SKIPPED the onnxruntime anchor: could not install ${pins[*]} into $venv (no PyPI access?)"
fi
kill "$pid" && wait "$pid" 2>/dev/null || true
log "load: $(uptime)"
