#!/usr/bin/env bash
# npm packages pinned in package.json: wrangler (workerd), node 22, binaryen, playwright-core.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"
stamp="node_modules/.edgerag-stamp"
want="$(sha256sum package.json | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log "installing npm packages"
  # `npm install`, not `npm ci`: the lockfile cannot list other platforms' workerd builds here.
  npm install --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi
