#!/usr/bin/env bash
# A large repository end to end through the local worker (workerd, local D1 + Queues), read in place
# through a hard-link listing under /tmp (never copied into this repository): the first index with
# the `edgerag index` CLI, a re-index after a one-file change and after deleting a directory; time
# to READY, files and chunks beside `edgerag chunk` over the same listing, D1 size, searches during
# and after, errors, the limits ledger's maxima per stage. Then a ≥ 1,000-file tree with the local
# MiniLM model (upload → READY). Goals are printed beside the figures. Not part of the test command
# (it runs for tens of minutes).
#
#   scripts/bench/large-repo.sh                     both runs, defaults below
#   LARGE_TREE=DIR LARGE_MAX_FILES=20000            the hash-embedder run's tree and its size cap
#                                                   (default: the cargo registry's sources, its first
#                                                   crates up to 20,000 files)
#   MINILM_TREE=DIR MINILM_MAX_FILES=1000           the MiniLM run's tree and cap (default: the same
#                                                   registry, its first crates up to 1,000 files)
#   MINILM_URL=http://127.0.0.1:8788/v1             an embedding server already running (default: one
#                                                   started here)
#   LARGE_ONLY=hash|minilm                          one of the two runs
#   LARGE_END_ONLY=1                                the hash run without the change and deletion
#                                                   steps: the first index, then the job's end alone
#                                                   in a new isolate
#   LARGE_STATE=DIR                                 keep the hash run's worker state in DIR (a new
#                                                   path); a later run finding it there runs only
#                                                   the job's end alone in a new isolate on it
#   LARGE_END_COPY_MB=16                            that step with a deployment's in-memory copy
#                                                   budgets (LOCAL_INDEX_CACHE_MB and
#                                                   KEYWORD_INDEX_CACHE_MB; the local ones are 256)
#   LARGE_COPY_MB=16                                every step with those budgets (where the local
#                                                   vector copy's memory would otherwise count)
#   LARGE_NO_SEARCHES_DURING=1                      no searches while a job runs (the 12 after each
#                                                   step still run): the queue stages' memory alone
#   LARGE_WORKER_LOG=1                              the worker's whole log on stderr as it runs (the
#                                                   harness keeps only its last 2 MB for BENCH_LOG)
#   EDGERAG_CLI=PATH                                a built `edgerag` CLI (default: built here)
#   BENCH_OUT=FILE                                  also append each run's figures as JSON lines
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"
bash scripts/build-worker.sh --fast --test-hooks --if-stale
if [ -z "${EDGERAG_CLI:-}" ]; then
  cargo build --profile cli -q -p edgerag-cli
  export EDGERAG_CLI="${CARGO_TARGET_DIR:-$EDGERAG_ROOT/target}/cli/edgerag"
fi
registry="$(ls -d "$HOME"/.cargo/registry/src/*/ 2>/dev/null | head -1)"
only="${LARGE_ONLY:-}"
# A run whose ledger went over a budget exits non-zero (the harness): the other run still runs.
status=0
if [ "$only" != minilm ]; then
  node scripts/bench/large-repo.mjs --tree "${LARGE_TREE:-$registry}" --max-files "${LARGE_MAX_FILES:-20000}" --embedder hash ${LARGE_END_ONLY:+--end-only} || status=1
fi
if [ "$only" != hash ]; then
  url=()
  [ -n "${MINILM_URL:-}" ] && url=(--embed-url "$MINILM_URL")
  [ -z "${MINILM_URL:-}" ] && bash scripts/embed-server.sh --build
  node scripts/bench/large-repo.mjs --tree "${MINILM_TREE:-$registry}" --max-files "${MINILM_MAX_FILES:-1000}" --embedder real --no-edits --label "MiniLM" ${url[@]+"${url[@]}"} || status=1
fi
exit "$status"
