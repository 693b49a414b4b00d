#!/usr/bin/env bash
# Chunking throughput of the wasm32 build in node vs the native build, on the same ≥ 1 MB of real
# TypeScript / JavaScript / Rust found on this machine (node_modules, the cargo registry).
# Both sides run `chunk_text` with the default config (parse + split + merge + ids + keywords);
# the native binary uses the release profile, like the wasm.
#   scripts/bench/wasm.sh            # prints one JSON line per side and family, then the ratios
#   scripts/bench/wasm.sh --graph    # in wasm32 only: chunk + graph vs chunk alone per family
#                                    # (interleaved rounds, median ratio; target ≤ 1.3×; ROUNDS, default 11)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"
cargo build -q -p edgerag-wasm-check --lib --target wasm32-unknown-unknown --release
cargo build -q -p edgerag-wasm-check --bin edgerag-wasm-check --release
target="${CARGO_TARGET_DIR:-target}"
wasm="$target/wasm32-unknown-unknown/release/edgerag_wasm_check.wasm"
native="$target/release/edgerag-wasm-check"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
budget=$((3 << 19)) # 1.5 MB per family
pick() { # files in path order until the budget, skipping files over 256 KB
  LC_ALL=C sort >"$work/sorted"
  while read -r f; do
    s=$(stat -c %s "$f")
    if [ "$s" -gt 262144 ]; then continue; fi
    total=$(( ${total:-0} + s ))
    echo "$f"
    if [ "$total" -ge "$budget" ]; then break; fi
  done <"$work/sorted"
}
cargo_src="${CARGO_HOME:-$HOME/.cargo}/registry/src"
find node_modules -name '*.ts' -type f | pick >"$work/typescript"
find node_modules -name '*.js' -not -name '*.min.js' -type f | pick >"$work/javascript"
find "$cargo_src" -name '*.rs' -type f | pick >"$work/rust"
if [ "${1:-}" = --graph ]; then
  for family in typescript javascript rust; do
    echo "$family wasm graph $(node scripts/wasm/compare.mjs --graph-ratio "$wasm" <"$work/$family")"
  done
  exit 0
fi
for family in typescript javascript rust; do
  n=$(ROUNDS=3 "$native" time <"$work/$family")
  w=$(ROUNDS=3 node scripts/wasm/compare.mjs --time "$wasm" <"$work/$family")
  echo "$family native $n"
  echo "$family wasm   $w"
  node scripts/bench/wasm-ratio.mjs "$n" "$w"
done
