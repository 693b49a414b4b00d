#!/usr/bin/env bash
# The documentation book (docs/, book.toml): the pinned mdBook CLI, without its `serve` / `watch`
# features (a web server and a file watcher the build does not need: half the compile time).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
if ! mdbook --version 2>/dev/null | grep -qx "mdbook v$MDBOOK_VERSION"; then
  log "installing mdbook $MDBOOK_VERSION (a few minutes, once per machine)"
  cargo install mdbook --version "$MDBOOK_VERSION" --locked --no-default-features --features search
fi
