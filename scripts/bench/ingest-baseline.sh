#!/usr/bin/env bash
# Ingestion side by side with an earlier build, in one run: the same tree (default: the Node.js
# headers), the hash embedder (pipeline cost alone), each build through its own ingestion bench
# (scripts/bench/ingest.sh, or scripts/bench-ingest.sh in builds older than that), rounds
# alternating, the earlier build first. Prints each run, the medians and their ratio beside the
# goal (≥ 3× the pipeline's throughput when the goal was set).
#
#   scripts/bench/ingest-baseline.sh [--baseline REV] [--rounds N] [-- ARGS for both benches]
#
# REV defaults to e32e383, the build the goal's "167 chunks/s" was measured on (Nov 2026, on a
# loaded machine). It is checked out as a git worktree under target/bench-ingest-baseline/ and built
# there with its own scripts, sharing this checkout's cargo target directory (only what differs is
# compiled again) and node_modules (the pinned tools are the same).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"

baseline=e32e383 rounds=2 bench_args=(--embedder hash)
while [ $# -gt 0 ]; do
  case "$1" in
    --baseline) baseline="${2:?--baseline needs a revision}"; shift 2 ;;
    --rounds) rounds="${2:?--rounds needs a number}"; shift 2 ;;
    --) shift; bench_args=(--embedder hash "$@"); break ;;
    *) echo "usage: $0 [--baseline REV] [--rounds N] [-- ARGS for both benches]" >&2; exit 2 ;;
  esac
done
rev="$(git rev-parse --verify --short "$baseline^{commit}")"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$EDGERAG_ROOT/target}"
work="$CARGO_TARGET_DIR/bench-ingest-baseline/$rev"
if [ ! -e "$work/.git" ]; then
  log "checking out $rev into $work"
  git worktree prune # a checkout removed with the target directory (cargo clean) is forgotten
  git worktree add --force --detach "$work" "$rev" >/dev/null
fi
[ -e "$work/node_modules" ] || ln -s "$EDGERAG_ROOT/node_modules" "$work/node_modules"
if [ -f "$work/scripts/bench/ingest.sh" ]; then base_bench=scripts/bench/ingest.sh; else base_bench=scripts/bench-ingest.sh; fi

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# Each bench builds its worker when stale (the first round builds both).
run() { # name dir script round
  local log="$out/$1-$4.log"
  (cd "$2" && bash "$3" "${bench_args[@]}") >"$log" 2>&1 || { tail -40 "$log" >&2; exit 1; }
  local secs rate
  secs="$(sed -n 's/^first index: *\([0-9.]*\) s .*/\1/p' "$log")"
  rate="$(sed -n 's/.* files\/s, \([0-9.]*\) chunks\/s$/\1/p' "$log" | head -1)"
  [ -n "$secs" ] && [ -n "$rate" ] || { echo "no figures in $1's output:" >&2; tail -40 "$log" >&2; exit 1; }
  echo "$rate" >>"$out/$1.rates"
  printf 'round %d  %-8s %6.1f s upload→READY, %7.1f chunks/s  (load average after: %s)\n' \
    "$4" "$1" "$secs" "$rate" "$(cut -d' ' -f1-3 /proc/loadavg)"
}
for i in $(seq 1 "$rounds"); do
  run baseline "$work" "$base_bench" "$i"
  run current "$EDGERAG_ROOT" scripts/bench/ingest.sh "$i"
done
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
b="$(median "$out/baseline.rates")" c="$(median "$out/current.rates")"
awk -v b="$b" -v c="$c" -v rev="$rev" -v n="$rounds" 'BEGIN {
  r = c / b
  printf "median of %d: baseline (%s) %.1f chunks/s, current %.1f chunks/s: %.2f×\n", n, rev, b, c, r
  printf "goal ≥ 3× the baseline: %s (%.2f×)\n", (r >= 3 ? "met" : "NOT MET"), r
}'
