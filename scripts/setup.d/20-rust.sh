#!/usr/bin/env bash
# Rust: the wasm32 target and the pinned worker-build / wasm-bindgen CLIs.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy rustfmt
if ! worker-build --version 2>/dev/null | grep -q "$WORKER_BUILD_VERSION"; then
  log "installing worker-build $WORKER_BUILD_VERSION (several minutes, once per machine)"
  cargo install worker-build --version "$WORKER_BUILD_VERSION" --locked
fi
if ! wasm-bindgen --version 2>/dev/null | grep -q "$WASM_BINDGEN_VERSION"; then
  log "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (several minutes, once per machine)"
  # --locked fails offline here (a locked dependency is missing from the mirror).
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
fi
