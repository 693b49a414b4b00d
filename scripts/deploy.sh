#!/usr/bin/env bash
# Deploys edgerag to your Cloudflare account, idempotently; `--destroy` removes it, `--dry-run`
# prints every command and checks the real bundle offline. Options: scripts/deploy.sh --help;
# the guide: docs/guide/deploying.md. The work is done by scripts/deploy/deploy.mjs.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
exec node "$EDGERAG_ROOT/scripts/deploy/deploy.mjs" "$@"
