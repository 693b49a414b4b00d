#!/usr/bin/env bash
# Per-node chunk plan throughput: a real source tree (default: this repository's Rust and
# TypeScript/JavaScript sources) indexed in edgerag in workerd (local D1 + Queues, hash test
# embedder), then a dry run and a real run of the `per-node` strategy over its code graph. Prints
# nodes/s of both as the run record reports them (`rate`) and as measured from the client.
#
#   scripts/bench/plans.sh [--tree DIR] [--batch-size N]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"
bash scripts/build-worker.sh --fast --if-stale
node scripts/bench/plans.mjs "$@"
