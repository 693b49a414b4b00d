#!/usr/bin/env bash
# wasm32: lints of the core for wasm32, the build with every grammar, no unresolved `env` imports,
# and chunks byte-identical to the native build on every fixture (several configurations).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"

log "wasm32: clippy (edgerag-core, all grammars)"
cargo clippy -p edgerag-core --target wasm32-unknown-unknown --lib --locked -- -D warnings

log "wasm32: build the chunking module (all grammars)"
cargo build -p edgerag-wasm-check --lib --target wasm32-unknown-unknown --release --locked
target="${CARGO_TARGET_DIR:-$EDGERAG_ROOT/target}"
wasm="$target/wasm32-unknown-unknown/release/edgerag_wasm_check.wasm"
node scripts/wasm/check-imports.mjs "$wasm"

log "wasm32: compare chunks with the native build"
# The `native` profile (opt-level 3, no fat LTO): the output does not depend on the profile, and
# this build is not what ships, so it should not pay for a whole-program optimization.
cargo build -p edgerag-wasm-check --bin edgerag-wasm-check --profile native --locked
native="$target/native/edgerag-wasm-check"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Every fixture, plus this repository's own sources (real code in several languages).
{
  find tests/fixtures -type f
  git ls-files -- 'crates/*.rs' 'src/*.rs' 'scripts/*.mjs' 'public/*.js' 'public/*.ts' 2>/dev/null || true
} | LC_ALL=C sort -u >"$work/files"
for config in '' \
  '{"maxLines":12,"maxTokens":120,"overlapLines":2}' \
  '{"maxLines":3,"maxTokens":16,"overlapLines":1,"docstringLines":1}'; do
  EDGERAG_CHUNK_CONFIG="$config" "$native" json <"$work/files" >"$work/native.jsonl"
  EDGERAG_CHUNK_CONFIG="$config" node scripts/wasm/compare.mjs "$wasm" "$work/native.jsonl" <"$work/files"
done
