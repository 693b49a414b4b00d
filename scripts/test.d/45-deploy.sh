#!/usr/bin/env bash
# The one-command deploy, offline: its tests against a fake `wrangler` on PATH (a first run
# creates everything, a second nothing, a failed run resumes, --destroy asks first), then
# `scripts/deploy.sh --dry-run` for both plans: every command it would run, and
# `wrangler deploy --dry-run` with the generated configuration, failing on any wrangler warning and
# on a bundle over the plan's size limit. No account is needed.
#
# The bundle is the test command's worker build (made by the e2e step; built here when missing):
# release, no wasm-opt, with the test routes — larger than the deploy build, so its size is an
# upper bound of the deployed one. Building the deploy variant too would recompile the worker
# (several minutes on 2 cores); scripts/deploy.sh builds it for a real deploy.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"
node --test --test-reporter=spec tests/deploy/*.test.mjs
bash scripts/build-worker.sh --fast --test-hooks --if-stale
state="$(mktemp -d)"
trap 'rm -rf "$state"' EXIT
for plan in paid free; do
  log "deploy dry run, $plan plan"
  EDGERAG_STATE="$state" bash scripts/deploy.sh --dry-run --no-build --plan "$plan"
done
