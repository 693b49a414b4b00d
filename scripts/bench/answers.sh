#!/usr/bin/env bash
# Answer quality end to end through the worker, on two kinds of questions (a function's doc
# sentence → that function; a real commit subject → the file it changed), over public repositories
# at pinned snapshot commits (scripts/bench/answers.repos.json), beside plain baselines in the same
# run, with the goals. Reads git mirrors of those repositories in place (bring them with git clone
# --mirror or the search tool's fetch; nothing of them is copied into this repository).
#
#   scripts/bench/answers.sh --mirrors DIR [--split dev|heldout|all] [--kind doc|change]
#                            [--profile NAME] [--body '{"k": v}'] [--fresh] [--no-baselines]
#   EDGERAG_BENCH_MIRRORS=DIR scripts/bench/answers.sh
#
# The worker's state (target/bench-answers/state) is kept between runs: a second run re-indexes
# nothing that did not change and only asks the questions again (--fresh starts from nothing, as
# after a change to chunking). The local MiniLM server is started when none answers.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"
bash scripts/setup.sh >/dev/null
url="${EMBED_URL:-http://127.0.0.1:8788/v1}"
if ! curl -fsS --max-time 2 "${url%/v1}/health" >/dev/null 2>&1 && [ -z "${EMBED_URL:-}" ]; then
  log "no embedding server at $url: starting scripts/embed-server.sh --background"
  bash scripts/embed-server.sh --background
fi
bash scripts/build-worker.sh --fast --if-stale
cargo build --profile cli -q -p edgerag-cli
exec node scripts/bench/answers.mjs --embed-url "$url" "$@"
