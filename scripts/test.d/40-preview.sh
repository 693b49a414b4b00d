#!/usr/bin/env bash
# The page: build the preview wasm, hold it to the size budget, run the wasm-bindgen tests of the
# preview API in node, then the browser tests (chromium against the worker in workerd): the
# chunking preview (preview.test.mjs) and the console's Search and Repositories tabs
# (console.test.mjs, ≈ 30 s with its own worker).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"

# Budget for the gzipped preview wasm. All 12 grammar features weigh ≈ 2.0 MB gzip -9
# (docs/tree-sitter-wasm.md) plus ≈ 0.16 MB for the chunker itself; 2.4 MB leaves ≈ 10 %
# headroom and still catches an accidental doubling (a duplicated grammar, debug info, no LTO).
budget_kb="${EDGERAG_PREVIEW_BUDGET_KB:-2400}"

bash scripts/build-preview.sh
wasm=public/pkg/edgerag_preview_bg.wasm
gz_bytes=$(gzip -9 -c "$wasm" | wc -c)
gz_kb=$((gz_bytes / 1000))
raw_kb=$(($(stat -c %s "$wasm") / 1000))
log "preview wasm: ${raw_kb} kB raw, ${gz_kb} kB gzip -9 (budget ${budget_kb} kB)"
if [ "$gz_kb" -gt "$budget_kb" ]; then
  echo "preview wasm is ${gz_kb} kB gzipped, over the ${budget_kb} kB budget" >&2
  exit 1
fi

# The preview API in node, through wasm-bindgen-test-runner (ships with the pinned wasm-bindgen CLI,
# needs no browser and no network). Grammar-free dev build: these tests cover the conversion layer
# (results, errors, panics); the shipped build with every grammar is what the browser test loads.
log "wasm-bindgen tests of the preview API (node)"
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  cargo test --locked --target wasm32-unknown-unknown -p edgerag-preview --no-default-features
# --no-deps: lint this crate only (the core's own lints run natively in 10-rust.sh).
cargo clippy --locked -p edgerag-preview --all-targets --target wasm32-unknown-unknown --no-default-features \
  --no-deps -- -D warnings

log "browser tests: preview and console (chromium + playwright-core against the worker in workerd)"
# The worker engineer's build (skipped when up to date; 30-e2e.sh normally did it already). It has
# every grammar, like public/pkg, so the page and POST /v1/chunk chunk code the same way.
bash scripts/build-worker.sh --fast --test-hooks --if-stale
mkdir -p target/artifacts
node --test --test-reporter=spec tests/browser/*.test.mjs
