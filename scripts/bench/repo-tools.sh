#!/usr/bin/env bash
# The repository tools' speed goals on a real tree of ≥ 5,000 files from the machine (default:
# /usr/include, ~7,900 C/C++ headers) indexed in workerd (local D1 + Queues, hash embedder):
# p95 of repo.grep with a selective literal (goal ≤ 100 ms), repo.map (≤ 300 ms) and repo.impact
# of a 10-file diff (≤ 200 ms), each printed beside its goal as `met` / `NOT MET`.
#
#   scripts/bench/repo-tools.sh [--tree DIR] [--files N] [--rounds N] [--max-bytes N]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"
bash scripts/build-worker.sh --fast --if-stale
node scripts/bench/repo-tools.mjs "$@"
