#!/usr/bin/env bash
# Debian packages: clang/llvm 14 (tree-sitter C code for wasm32), chromium (browser test).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
need=()
command -v clang-14 >/dev/null || need+=(clang-14)
command -v llvm-ar-14 >/dev/null || need+=(llvm-14)
command -v chromium >/dev/null || need+=(chromium)
command -v sqlite3 >/dev/null || need+=(sqlite3)
command -v gzip >/dev/null || need+=(gzip)
if [ ${#need[@]} -gt 0 ]; then
  log "installing Debian packages: ${need[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
