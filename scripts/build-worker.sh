#!/usr/bin/env bash
# Builds the worker with worker-build (pinned, offline: wasm-bindgen / wasm-opt / esbuild come from
# scripts/env.sh) into build/worker/ (wrangler.toml's `main`).
#
#   scripts/build-worker.sh              release build, every tree-sitter grammar, wasm-opt (deploy)
#   scripts/build-worker.sh --fast       release build without wasm-opt (tests, local dev)
#   scripts/build-worker.sh --no-grammars  skip the 13 grammars (much faster to compile; dev only)
#   scripts/build-worker.sh --test-hooks  with the `/__test/*` routes (the e2e tests and benchmarks)
#   scripts/build-worker.sh --if-stale   skip the build when build/worker is newer than every input
#                                        and was built with the same options
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$EDGERAG_ROOT"

opt=1 grammars=1 hooks=0 if_stale=0
for arg in "$@"; do
  case "$arg" in
    --fast) opt=0 ;;
    --no-grammars) grammars=0 ;;
    --test-hooks) hooks=1 ;;
    --if-stale) if_stale=1 ;;
    *) echo "usage: $0 [--fast] [--no-grammars] [--test-hooks] [--if-stale]" >&2; exit 2 ;;
  esac
done

out="$EDGERAG_ROOT/build/worker/shim.mjs"
stamp="$EDGERAG_ROOT/build/worker/.edgerag-build"
want="opt=$opt grammars=$grammars hooks=$hooks"
if [ "$if_stale" = 1 ] && [ -f "$out" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  newer="$(find src crates/core/src crates/core/Cargo.toml Cargo.toml Cargo.lock .cargo -newer "$stamp" -type f 2>/dev/null | head -1)"
  if [ -z "$newer" ]; then
    log "worker build is up to date ($want)"
    exit 0
  fi
fi

args=(--release)
[ "$opt" = 0 ] && args+=(--no-opt)
cargo_args=()
[ "$grammars" = 0 ] && cargo_args+=(--no-default-features)
[ "$hooks" = 1 ] && cargo_args+=(--features test-hooks)
log "building the worker ($want)"
# The stamp gets the time the build *started*: files edited during the build stay newer than it.
started="$(mktemp)"
trap 'rm -f "$started"' EXIT
worker-build "${args[@]}" ${cargo_args[@]+-- "${cargo_args[@]}"}
echo "$want" > "$stamp"
touch -r "$started" "$stamp"
ls -l build/*.wasm 2>/dev/null | awk '{printf "[edgerag] worker wasm: %s bytes\n", $5}' >&2 || true
