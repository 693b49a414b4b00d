#!/usr/bin/env bash
# Fuzzing, bounded: lints of the fuzz crate, the replay of every saved regression input and seed on
# stable (`cargo test`), then one libFuzzer build of the five targets (chunk_code, chunk_text,
# archive, search_request, fts_query) and a short run of each from the seeds plus the corpus kept
# in target/fuzz/corpus. FUZZ_SECONDS (default 10) is the time per target; longer runs:
# docs/development.md ("Tests"). A crash fails the step; its input is in fuzz/artifacts/<target>/.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"
bash scripts/setup.d/25-fuzz.sh
seconds="${FUZZ_SECONDS:-10}"
fz=(--manifest-path fuzz/Cargo.toml --target-dir "$EDGERAG_ROOT/target" --locked)
rustfmt --edition 2021 --check fuzz/src/*.rs fuzz/fuzz_targets/*.rs fuzz/tests/*.rs
cargo clippy "${fz[@]}" --no-default-features --all-targets -- -D warnings
seeds="$EDGERAG_ROOT/target/fuzz/seeds"
rm -rf "$seeds"
EDGERAG_FUZZ_SEEDS_OUT="$seeds" cargo test "${fz[@]}" --no-default-features

# The nightly toolchain when rustup has one; else stable, which builds the same thing because
# without a sanitizer cargo-fuzz passes only stable flags (`-Cpasses=sancov-module`, `-Cllvm-args`).
if rustup run nightly rustc --version >/dev/null 2>&1; then
  fuzz=(cargo +nightly fuzz)
else
  log "fuzz: no nightly toolchain; building the targets with stable rustc"
  fuzz=(cargo fuzz)
fi
# No AddressSanitizer in the bounded run: the code the targets reach has no `unsafe` (the core's one
# block is the wasm32-only vector pre-score) and ASan doubles the build and halves the speed; the
# documented longer runs use it.
opts=(--fuzz-dir fuzz --target-dir "$EDGERAG_ROOT/target/fuzz" --sanitizer none --debug-assertions)
t=$SECONDS
"${fuzz[@]}" build "${opts[@]}"
log "fuzz: targets built in $((SECONDS - t)) s"
for target in chunk_code chunk_text archive search_request fts_query; do
  corpus="$EDGERAG_ROOT/target/fuzz/corpus/$target"
  mkdir -p "$corpus" "fuzz/artifacts/$target"
  dict=()
  [ -f "fuzz/dict/$target.dict" ] && dict=("-dict=fuzz/dict/$target.dict")
  log "fuzz: $target for ${seconds} s"
  out="$EDGERAG_ROOT/target/fuzz/$target.log"
  if ! "${fuzz[@]}" run "${opts[@]}" "$target" "$corpus" "$seeds/$target" -- \
    -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    "${dict[@]}" >"$out" 2>&1; then
    tail -n 60 "$out"
    log "fuzz: $target failed; the input is in fuzz/artifacts/$target/ (once fixed, keep it in fuzz/regressions/$target/)"
    exit 1
  fi
  grep -E '^(Done [0-9]+ runs|stat::number_of_executed_units|stat::peak_rss_mb)' "$out" | tr '\n' ' '
  echo
done
