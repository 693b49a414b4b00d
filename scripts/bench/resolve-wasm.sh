#!/usr/bin/env bash
# The wasm32 memory of a job end's code-graph resolution without the worker: a tree's code files
# extracted natively as the chunk stage stores their graphs (`edgerag-wasm-check graphs`), then
# resolved by the wasm32 build of the core in Node as the worker resolves them (the symbol table
# made for the node count, pages of 4 MB of JSON, each row taken in alone, votes, ranks), printing
# `memory.buffer.byteLength` and the live heap after each step (scripts/bench/resolve-wasm.mjs).
#   scripts/bench/resolve-wasm.sh [DIR] [MAX_FILES]   default: the cargo registry's sources, its
#                                                    first crates up to 20,000 files (as
#                                                    scripts/bench/large-repo.sh lists them)
#   NODES=0 scripts/bench/resolve-wasm.sh             the table grown as needed instead
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"
cargo build -q -p edgerag-wasm-check --lib --target wasm32-unknown-unknown --release
cargo build -q -p edgerag-wasm-check --bin edgerag-wasm-check --release
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
GRAPH_ROOT="$tree" "$target/release/edgerag-wasm-check" graphs <"$work/files" >"$work/graphs.tsv"
if [ -z "${NODES+x}" ]; then
  # As the worker counts its stored nodes.
  NODES="$(cut -f2 "$work/graphs.tsv" | node -e '
let n = 0; require("readline").createInterface({ input: process.stdin }).on("line", (l) => { n += JSON.parse(l).nodes.length; }).on("close", () => console.log(n));')"
fi
NODES="$NODES" node scripts/bench/resolve-wasm.mjs "$target/wasm32-unknown-unknown/release/edgerag_wasm_check.wasm" "$work/graphs.tsv"
