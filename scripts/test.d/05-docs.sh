#!/usr/bin/env bash
# The documentation: the generated HTTP API page and limits table are fresh (the CLI page is checked by the rust
# step's `cli_reference_is_fresh`), the configuration page names every variable wrangler.toml
# sets, the README stays a landing page, and the book builds with no broken internal link; the
# checks themselves are tested first (scripts/docs/docs.test.mjs), and so is the SWE-bench
# benchmark's metric (scripts/bench/swebench-metric.test.mjs: it is small and needs nothing built),
# and the embedder trainer's corpus check (scripts/train/train_test.py, standard library only).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"
node --test scripts/docs/docs.test.mjs scripts/bench/swebench-metric.test.mjs
python3 -m unittest scripts/train/train_test.py
node scripts/docs/http-api.mjs --check
node scripts/docs/limits.mjs --check
node scripts/docs/check-config.mjs
lines=$(wc -l < README.md)
if [ "$lines" -gt 300 ]; then
  echo "README.md has $lines lines; keep it a landing page (≤ 300) and move the rest into docs/" >&2
  exit 1
fi
rm -rf target/book && mkdir -p target
if ! mdbook build > target/mdbook.log 2>&1; then
  cat target/mdbook.log >&2
  echo "mdbook build failed" >&2
  exit 1
fi
node scripts/docs/check-links.mjs target/book
