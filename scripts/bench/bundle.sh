#!/usr/bin/env bash
# Bundle size and cold start of the builds users deploy: the deploy build (every grammar,
# wasm-opt) and the free-plan build (a grammar subset, wasm-opt), against the Workers limits
# (free plan 3 MB gzip, paid plan 10 MB; our own ceiling 5 MB). For each: raw and gzip size of the
# wasm (the bulk of the upload), then edgerag started in workerd: ms until /health answers, the
# first /v1/chunk request (instantiates the module, parses with a grammar) and a warm one.
#
#   scripts/bench/bundle.sh [--free-languages ts,js,python,go]
#
# Leaves build/ holding the last variant built: run scripts/build-worker.sh again for dev or tests.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"

free=ts,js,python,go
while [ $# -gt 0 ]; do
  case "$1" in
    --free-languages) free="${2:?}"; shift 2 ;;
    *) echo "usage: $0 [--free-languages a,b,c]" >&2; exit 2 ;;
  esac
done

results=()
measure() {
  local name="$1"; shift
  log "building the $name build ($*)"
  bash scripts/build-worker.sh "$@" >/dev/null
  local raw gz
  raw=$(stat -c %s build/index_bg.wasm)
  gz=$(gzip -9 -c build/index_bg.wasm | wc -c)
  local cold
  cold=$(node scripts/bench/bundle.mjs)
  results+=("$name|$*|$raw|$gz|$cold")
}

measure deploy
measure free-plan --languages "$free"

printf '\n| build | flags | wasm raw | wasm gzip | limit | /health after start | first /v1/chunk | warm /v1/chunk |\n'
printf '| --- | --- | --- | --- | --- | --- | --- | --- |\n'
for r in "${results[@]}"; do
  IFS='|' read -r name flags raw gz cold <<<"$r"
  limit="≤ 5 MB (paid plan 10 MB)"
  [ "$name" = free-plan ] && limit="≤ 3 MB (free plan)"
  IFS=' ' read -r up first warm <<<"$cold"
  printf '| %s | %s | %.2f MB | %.2f MB | %s | %s ms | %s ms | %s ms |\n' "$name" "${flags:-(none)}" \
    "$(echo "$raw / 1000000" | bc -l)" "$(echo "$gz / 1000000" | bc -l)" "$limit" "$up" "$first" "$warm"
done
echo
for r in "${results[@]}"; do
  IFS='|' read -r name flags raw gz cold <<<"$r"
  max=5000000
  [ "$name" = free-plan ] && max=3000000
  verdict="NOT MET"
  [ "$gz" -le "$max" ] && verdict=met
  printf 'goal %s build ≤ %d MB gzip: %s (%.2f MB)\n' "$name" $((max / 1000000)) "$verdict" "$(echo "$gz / 1000000" | bc -l)"
done
