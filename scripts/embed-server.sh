#!/usr/bin/env bash
# The local embedding server (all-MiniLM-L6-v2, OpenAI-compatible /v1/embeddings): downloads the
# model if missing, builds the server (optimized `embed-server` profile; a no-op when up to date)
# and runs it on 127.0.0.1, waiting until /health answers.
#
#   scripts/embed-server.sh               run in the foreground (Ctrl-C stops it)
#   scripts/embed-server.sh --background  start it detached (reuses one already answering),
#                                         pid in $EDGERAG_STATE/embed-server.pid, log beside it
#   scripts/embed-server.sh --stop        stop the background server
#   scripts/embed-server.sh --build       only build
#
# Port: EMBED_SERVER_PORT (default 8788); host: EMBED_SERVER_HOST (default 127.0.0.1).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$EDGERAG_ROOT"

mode=foreground
for arg in "$@"; do
  case "$arg" in
    --background) mode=background ;;
    --stop) mode=stop ;;
    --build) mode=build ;;
    *) echo "usage: $0 [--background | --stop | --build]" >&2; exit 2 ;;
  esac
done

host="${EMBED_SERVER_HOST:-127.0.0.1}"
port="${EMBED_SERVER_PORT:-${EDGERAG_EMBED_PORT:-8788}}"
addr="$host:$port"
pidfile="$EDGERAG_STATE/embed-server.pid"
logfile="$EDGERAG_STATE/embed-server.log"
bin="$EDGERAG_ROOT/target/embed-server/edgerag-embed-server"
mkdir -p "$EDGERAG_STATE"

healthy() { curl -fsS --max-time 2 "http://$addr/health" 2>/dev/null | grep -q '"status":"ok"'; }

if [ "$mode" = stop ]; then
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    kill "$(cat "$pidfile")" && log "embed server stopped"
  fi
  rm -f "$pidfile"
  exit 0
fi

bash "$EDGERAG_ROOT/scripts/setup.d/40-model.sh"
# Its own workspace (crates/embed-server), built into the shared target dir.
cargo_es=(--profile embed-server --manifest-path "$EDGERAG_ROOT/crates/embed-server/Cargo.toml"
  --target-dir "$EDGERAG_ROOT/target" --locked)
# Skip cargo entirely when the binary is newer than its sources (cargo would still wait for the
# shared target-dir lock while other builds run).
es_dir="$EDGERAG_ROOT/crates/embed-server"
if [ ! -x "$bin" ] || [ -n "$(find "$es_dir/src" "$es_dir/Cargo.toml" "$es_dir/Cargo.lock" -newer "$bin" 2>/dev/null | head -1)" ]; then
  [ -x "$bin" ] || log "building edgerag-embed-server (the first build compiles candle: several minutes)"
  cargo build "${cargo_es[@]}" --quiet
fi
[ "$mode" = build ] && exit 0

# candle allocates fresh tensors for every op; with glibc's defaults the large ones are mmap'ed and
# returned each time, and the page faults cost ~15-20 % of the throughput (measured with
# scripts/bench/embed-server.sh). Keep them on the heap, for this process only.
export GLIBC_TUNABLES="${GLIBC_TUNABLES:-glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824}"

if [ "$mode" = foreground ]; then
  log "embed server on http://$addr (model all-MiniLM-L6-v2, 384 dims)"
  exec "$bin" --addr "$addr"
fi

# --background
if healthy; then
  log "embed server already answering on http://$addr"
  exit 0
fi
nohup "$bin" --addr "$addr" >"$logfile" 2>&1 &
echo $! >"$pidfile"
for _ in $(seq 1 240); do
  if healthy; then
    log "embed server ready on http://$addr (pid $(cat "$pidfile"), log $logfile)"
    exit 0
  fi
  if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    echo "embed server exited during startup:" >&2
    tail -20 "$logfile" >&2
    exit 1
  fi
  sleep 0.25
done
echo "embed server did not answer /health within 60 s; log: $logfile" >&2
exit 1
