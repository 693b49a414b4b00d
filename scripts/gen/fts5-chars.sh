#!/usr/bin/env bash
# Regenerates crates/search/src/bm25/fts5_chars.rs: the characters SQLite FTS5's tokenizer
# (`unicode61 remove_diacritics 2`, the keyword index's) treats exactly as the in-memory BM25
# index's tokenizer does — measured, one code point at a time, against node:sqlite's SQLite. The
# in-memory copies trust only text made of these characters (and ASCII); the e2e suite checks the
# table against the SQLite of workerd's D1 (`/__test/search/tokenizer`).
#
#   scripts/gen/fts5-chars.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"
dump="$(mktemp)"
trap 'rm -f "$dump"' EXIT
node scripts/gen/fts5-tokens.mjs "$dump"
EDGERAG_FTS5_TOKENS="$dump" cargo test -q -p edgerag-search --lib bm25::tests::regenerate_fts5_chars -- --ignored --exact
cargo fmt -p edgerag-search
