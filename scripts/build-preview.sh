#!/usr/bin/env bash
# Builds the browser preview's chunker: crates/preview → wasm32 (release) → wasm-bindgen --target web
# → wasm-opt → public/pkg/ (served by the worker as static assets, next to public/index.html).
#
#   scripts/build-preview.sh            all grammar features (what the worker ships)
#   EDGERAG_PREVIEW_FEATURES="lang-typescript lang-python" scripts/build-preview.sh
#   EDGERAG_PREVIEW_FEATURES= scripts/build-preview.sh     no grammars (fast, dev only)
#   EDGERAG_PREVIEW_OPT=0 scripts/build-preview.sh          skip wasm-opt (fast, bigger)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$EDGERAG_ROOT"

features="${EDGERAG_PREVIEW_FEATURES-all-languages}"
args=(build --target wasm32-unknown-unknown --release -p edgerag-preview --no-default-features)
[ -n "$features" ] && args+=(--features "$features")
log "building the preview wasm (features: ${features:-none})"
cargo "${args[@]}"

target_dir="${CARGO_TARGET_DIR:-$EDGERAG_ROOT/target}"
wasm="$target_dir/wasm32-unknown-unknown/release/edgerag_preview.wasm"
out="$EDGERAG_ROOT/public/pkg"

# wasm-bindgen + wasm-opt take a while on a grammar-sized module: skip them when cargo's output is
# the one public/pkg was made from.
want="$(sha256sum "$wasm" | cut -d' ' -f1) opt=${EDGERAG_PREVIEW_OPT:-1}"
if [ -f "$out/.source" ] && [ "$(cat "$out/.source")" = "$want" ] && [ -f "$out/edgerag_preview_bg.wasm" ]; then
  log "public/pkg is up to date"
  exit 0
fi
tmp="$(mktemp -d "$EDGERAG_ROOT/public/.pkg.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# An unresolved C symbol does not fail the link on wasm32; it would only break at load time.
node "$EDGERAG_ROOT/scripts/wasm/check-imports.mjs" "$wasm"

wasm-bindgen --target web --no-typescript --out-dir "$tmp" "$wasm"
if [ "${EDGERAG_PREVIEW_OPT:-1}" != 0 ]; then
  # memory-packing makes the gzip ~27% larger here (TREE_SITTER_WASM.md), so skip it. The enabled
  # features are the ones rustc's wasm32 target emits, plus SIMD128 (the core's vector pre-score);
  # all are in every current browser and workerd.
  wasm-opt -Oz --skip-pass=memory-packing \
    --enable-bulk-memory --enable-bulk-memory-opt --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue --enable-simd \
    "$tmp/edgerag_preview_bg.wasm" -o "$tmp/edgerag_preview_bg.opt.wasm"
  mv "$tmp/edgerag_preview_bg.opt.wasm" "$tmp/edgerag_preview_bg.wasm"
fi

echo "$want" > "$tmp/.source"

# Swap in the new build whole, so a running server never serves half of one.
rm -rf "$out.old"
[ -d "$out" ] && mv "$out" "$out.old"
mv "$tmp" "$out"
chmod 755 "$out"
rm -rf "$out.old"
trap - EXIT

bytes=$(stat -c %s "$out/edgerag_preview_bg.wasm")
gz=$(gzip -9 -c "$out/edgerag_preview_bg.wasm" | wc -c)
log "public/pkg: edgerag_preview_bg.wasm $((bytes / 1024)) KiB, gzip -9 $((gz / 1024)) KiB"
