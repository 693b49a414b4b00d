#!/usr/bin/env bash
# Builds the worker with worker-build (pinned, offline: wasm-bindgen / wasm-opt / esbuild come from
# scripts/env.sh) into build/worker/ (wrangler.toml's `main`).
#
#   scripts/build-worker.sh              release build, every tree-sitter grammar, wasm-opt (deploy)
#   scripts/build-worker.sh --fast       release build without wasm-opt (tests, local dev)
#   scripts/build-worker.sh --no-grammars  skip the 13 grammars (much faster to compile; dev only)
#   scripts/build-worker.sh --test-hooks  with the `/__test/*` routes (the e2e tests and benchmarks)
#   scripts/build-worker.sh --languages ts,js,python,rust,go
#                                        only these grammars (a smaller bundle, e.g. for the Workers
#                                        free plan's 3 MB); other files are chunked as text/lines.
#                                        Names: ts js python rust go java c cpp csharp ruby php kotlin
#   scripts/build-worker.sh --if-stale   cargo decides: the cargo step always runs (a no-op when
#                                        nothing changed); wasm-bindgen / wasm-opt / esbuild are
#                                        skipped when the .wasm and the options are the same as last time
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$EDGERAG_ROOT"

opt=1 grammars=1 hooks=0 if_stale=0 languages=
while [ $# -gt 0 ]; do
  arg="$1"; shift
  case "$arg" in
    --fast) opt=0 ;;
    --no-grammars) grammars=0 ;;
    --test-hooks) hooks=1 ;;
    --if-stale) if_stale=1 ;;
    --languages) languages="${1:?--languages needs a list}"; shift ;;
    --languages=*) languages="${arg#--languages=}" ;;
    *) echo "usage: $0 [--fast] [--no-grammars] [--languages a,b,c] [--test-hooks] [--if-stale]" >&2; exit 2 ;;
  esac
done

args=(--release)
[ "$opt" = 0 ] && args+=(--no-opt)
cargo_args=()
[ "$grammars" = 0 ] && cargo_args+=(--no-default-features)
[ "$hooks" = 1 ] && cargo_args+=(--features test-hooks)
if [ -n "$languages" ]; then
  grammars="$languages"
  features=()
  for l in ${languages//,/ }; do
    case "$l" in
      ts|typescript) features+=(edgerag-core/lang-typescript) ;;
      js|javascript) features+=(edgerag-core/lang-javascript) ;;
      py|python) features+=(edgerag-core/lang-python) ;;
      rs|rust) features+=(edgerag-core/lang-rust) ;;
      go|java|c|cpp|csharp|ruby|php|kotlin) features+=("edgerag-core/lang-$l") ;;
      *) echo "unknown language '$l' (ts js python rust go java c cpp csharp ruby php kotlin)" >&2; exit 2 ;;
    esac
  done
  cargo_args+=(--no-default-features --features "$(IFS=,; echo "${features[*]}")")
fi
out="$EDGERAG_ROOT/build/worker/shim.mjs"
stamp="$EDGERAG_ROOT/build/worker/.edgerag-build"
want="opt=$opt grammars=$grammars hooks=$hooks"

# Staleness: cargo knows every input (all crates, Cargo.lock, build scripts, .cargo), so run its
# step first with exactly the command and environment worker-build uses (then worker-build's own
# cargo step is a no-op); only the post-processing is skipped when its input did not change.
wasm="${CARGO_TARGET_DIR:-$EDGERAG_ROOT/target}/wasm32-unknown-unknown/release/edgerag_worker.wasm"
if [ "$if_stale" = 1 ]; then
  WASM_BINDGEN_USE_JS_SYS=1 cargo build --lib --release --target wasm32-unknown-unknown ${cargo_args[@]+"${cargo_args[@]}"}
  fingerprint="$want $(sha256sum "$wasm" | cut -d' ' -f1)"
  if [ -f "$out" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$fingerprint" ]; then
    log "worker build is up to date ($want)"
    exit 0
  fi
fi

log "building the worker ($want)"
rm -f "$stamp"
worker-build "${args[@]}" ${cargo_args[@]+-- "${cargo_args[@]}"}
echo "$want $(sha256sum "$wasm" | cut -d' ' -f1)" > "$stamp"
ls -l build/*.wasm 2>/dev/null | awk '{printf "[edgerag] worker wasm: %s bytes\n", $5}' >&2 || true
