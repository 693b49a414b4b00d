#!/usr/bin/env bash
# One command to run edgerag locally: installs what is missing (scripts/setup.sh), builds the
# worker (and the CLI and the preview page when missing), starts the local embedding server on
# 127.0.0.1:8788, applies the D1 migrations and runs the worker in workerd on 127.0.0.1:8787
# (wrangler dev --env local) with its state (D1, queues) in .edgerag/. Ctrl-C stops everything.
#
#   EDGERAG_PORT=8787 EDGERAG_EMBED_PORT=8788   ports
#   EDGERAG_DEV_FAST=1                          build the worker without the tree-sitter grammars
#   EDGERAG_CRON_SECONDS=300                    how often the scheduled run fires (0: never)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$EDGERAG_ROOT"

PORT="${EDGERAG_PORT:-8787}"
EMBED_PORT="${EDGERAG_EMBED_PORT:-8788}"
STATE="$EDGERAG_STATE/wrangler"

bash scripts/setup.sh
build_args=(--fast --if-stale)
[ "${EDGERAG_DEV_FAST:-0}" = 1 ] && build_args+=(--no-grammars)
bash scripts/build-worker.sh "${build_args[@]}"
if [ -x scripts/build-preview.sh ] && [ ! -f public/pkg/edgerag_preview_bg.wasm ] && [ ! -d public/pkg ]; then
  bash scripts/build-preview.sh || log "preview build failed; the API still works"
fi
log "building the edgerag CLI (the cli profile: opt-level 3, fat LTO)"
cargo build --profile cli -q -p edgerag-cli

mkdir -p "$STATE"
log "applying D1 migrations (state in $STATE)"
wrangler d1 migrations apply DB --local --env local --persist-to "$STATE" >/dev/null

pids=()
cleanup() {
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  log "stopped"
}
trap cleanup EXIT INT TERM

wait_http() { # url, seconds, what
  for _ in $(seq 1 $(( $2 * 4 ))); do
    curl -sf -o /dev/null "$1" && return 0
    sleep 0.25
  done
  log "$3 did not come up at $1"
  return 1
}

vars=(--var "OPENAI_BASE_URL:http://127.0.0.1:$EMBED_PORT/v1")
if [ -f scripts/embed-server.sh ]; then
  # Download the model and build the server first (minutes on the first run), then serve.
  EMBED_SERVER_PORT="$EMBED_PORT" bash scripts/embed-server.sh --build
  log "starting the local embedding server on 127.0.0.1:$EMBED_PORT"
  setsid env EMBED_SERVER_PORT="$EMBED_PORT" bash scripts/embed-server.sh &
  pids+=($!)
  wait_http "http://127.0.0.1:$EMBED_PORT/health" 120 "the embedding server"
else
  log "scripts/embed-server.sh is missing: indexing will retry until an embedder answers at 127.0.0.1:$EMBED_PORT"
fi

log "starting edgerag on http://127.0.0.1:$PORT"
setsid wrangler dev --env local --ip 127.0.0.1 --port "$PORT" --persist-to "$STATE" \
  --show-interactive-dev-session=false ${vars[@]+"${vars[@]}"} &
pids+=($!)
wait_http "http://127.0.0.1:$PORT/health" 120 "edgerag"

# `wrangler dev` never fires Cron Triggers. The scheduled run is what re-sends the work of a job
# whose queue messages were lost (JOB_RESUME_SECONDS), replaces a stalled one, retries dirty
# documents and starts due syncs, so run it here on the schedule wrangler.toml gives production
# (every 5 minutes; EDGERAG_CRON_SECONDS to change, 0 to turn it off).
CRON_SECONDS="${EDGERAG_CRON_SECONDS:-300}"
if [ "$CRON_SECONDS" -gt 0 ]; then
  (
    while sleep "$CRON_SECONDS"; do
      curl -sf -o /dev/null "http://127.0.0.1:$PORT/cdn-cgi/handler/scheduled?cron=*/5+*+*+*+*" ||
        log "the scheduled run did not answer"
    done
  ) &
  pids+=($!)
fi

cli="${CARGO_TARGET_DIR:-$EDGERAG_ROOT/target}/cli/edgerag"
cat >&2 <<MSG

  edgerag is running:  http://127.0.0.1:$PORT        (console: http://127.0.0.1:$PORT/#search; API key dev-token to write)
  health:              curl http://127.0.0.1:$PORT/health

  Index a directory (uploads, waits for READY):
    $cli index ./some/repo --repo me/some-repo --token dev-token

  Or over HTTP:
    curl -X POST http://127.0.0.1:$PORT/v1/repos/me/demo/files \\
      -H 'authorization: Bearer dev-token' -H 'content-type: application/json' \\
      -d '{"files":[{"path":"README.md","content":"# Demo\\n\\nHello edgerag.\\n"}]}'
    curl http://127.0.0.1:$PORT/v1/repos/me/demo/status
    tar czf - -C ./some/repo . | curl -X POST 'http://127.0.0.1:$PORT/v1/repos/me/some-repo/files?replace=true' \\
      -H 'authorization: Bearer dev-token' -H 'content-type: application/gzip' --data-binary @-

  Search:
    $cli search "how are requests authenticated" --repo me/some-repo
    $cli status me/some-repo

  Ctrl-C stops everything.

MSG
wait -n "${pids[@]}"
