#!/usr/bin/env bash
# Fuzzing: the pinned cargo-fuzz CLI (the fuzz step, scripts/test.d/15-fuzz.sh). The step uses a
# nightly toolchain when rustup has one and the stable one otherwise (no sanitizer: stable flags).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
if ! cargo fuzz --version 2>/dev/null | grep -q "$CARGO_FUZZ_VERSION"; then
  log "installing cargo-fuzz $CARGO_FUZZ_VERSION (about 2 minutes, once per machine)"
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
fi
