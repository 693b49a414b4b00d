#!/usr/bin/env bash
# The local embedding model: builds edgerag-embed-server (optimized profile, reused by the e2e
# tests through scripts/embed-server.sh) and runs its model tests against the real weights —
# ≥ 0.99 cosine vs an independent numpy BERT, paraphrase → target, batching/truncation — plus the
# HTTP API unit tests.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"
bash scripts/setup.d/40-model.sh
bash scripts/embed-server.sh --build
# crates/embed-server is its own workspace (kept out of the root one: candle is heavy).
es=(--profile embed-server --manifest-path crates/embed-server/Cargo.toml --target-dir "$EDGERAG_ROOT/target" --locked)
rustfmt --edition 2021 --check crates/embed-server/src/*.rs crates/embed-server/tests/*.rs crates/embed-server/benches/*.rs
cargo clippy "${es[@]}" --all-targets -- -D warnings
cargo test "${es[@]}" -- --include-ignored
