#!/usr/bin/env bash
# The wasm32 memory of the chunk stage without the worker: a tree's files cut into messages as the
# producer cuts them and chunked in one wasm32 instance of the core as the stage chunks and writes
# them (`crates/wasm-check`'s `chunk_stage`), printing each message after which
# `memory.buffer.byteLength` grew and the live heap's peak (scripts/bench/chunk-wasm.mjs).
#   scripts/bench/chunk-wasm.sh [DIR] [MAX_FILES]   default: the cargo registry's sources, its
#                                                  first crates up to 20,000 files (as
#                                                  scripts/bench/large-repo.sh lists them)
#   GROUP_BYTES=0 scripts/bench/chunk-wasm.sh       each message written at once, as before the
#                                                  stage wrote in groups
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"
cargo build -q -p edgerag-wasm-check --lib --target wasm32-unknown-unknown --release
target="${CARGO_TARGET_DIR:-target}"
tree="${1:-$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/ | head -1)}"
max="${2:-20000}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The first top-level directories, in name order, until MAX_FILES files.
node -e '
const fs = require("fs"), path = require("path");
const [tree, max] = [process.argv[1], Number(process.argv[2])];
const walk = (d, o) => { for (const e of fs.readdirSync(d, { withFileTypes: true })) { const p = path.join(d, e.name); if (e.isDirectory()) walk(p, o); else if (e.isFile()) o.push(p); } };
const out = [];
for (const e of fs.readdirSync(tree, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
  if (out.length >= max) break;
  if (e.isDirectory()) walk(path.join(tree, e.name), out); else out.push(path.join(tree, e.name));
}
fs.writeFileSync(process.argv[3], out.join("\n") + "\n");' "$tree" "$max" "$work/files"
node scripts/bench/chunk-wasm.mjs "$target/wasm32-unknown-unknown/release/edgerag_wasm_check.wasm" "$work/files"
