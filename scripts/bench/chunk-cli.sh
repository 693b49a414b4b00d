#!/usr/bin/env bash
# `edgerag chunk DIR --format jsonl` (ids, keywords, token counts, JSON out, every core) against
# text-splitter's Python binding (semantic-text-splitter: CodeSplitter / MarkdownSplitter), whole
# process vs whole process, same files, same maximum chunk size (2,000 chars ≈ 500 tokens), one
# hyperfine run per language. Prints the throughput ratio (target ≥ 1.5×).
#
#   scripts/bench/chunk-cli.sh [MB per language, default 3]
#
# Corpus: real sources already on the machine (cargo registry for Rust and Markdown, the Python
# installation for Python, npm's own node_modules for JavaScript), copied to target/bench-chunk-cli.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../env.sh"
cd "$EDGERAG_ROOT"
mb="${1:-3}"
runs="${EDGERAG_BENCH_RUNS:-5}"
work="$EDGERAG_ROOT/target/bench-chunk-cli"
venv="$EDGERAG_STATE/bench-venv"
py="$venv/bin/python"
mkdir -p "$work"

if ! "$py" -c 'import semantic_text_splitter, tree_sitter_rust, tree_sitter_python, tree_sitter_javascript' 2>/dev/null; then
  log "installing semantic-text-splitter 0.33.1 and its grammars into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q semantic-text-splitter==0.33.1 tree-sitter-rust==0.24.2 \
    tree-sitter-python==0.25.0 tree-sitter-javascript==0.25.0
fi
command -v hyperfine >/dev/null || { log "installing hyperfine"; apt-get install -y -q hyperfine >/dev/null; }

log "building edgerag (the cli profile users build: opt-level 3, fat LTO)"
cargo build --profile cli -p edgerag-cli --locked
bin="${CARGO_TARGET_DIR:-$EDGERAG_ROOT/target}/cli/edgerag"

python_lib="$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')"
npm_root="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
sources=("$HOME/.cargo/registry/src" "$python_lib" "$npm_root")
log "corpus: $mb MB per language from ${sources[*]}"
"$py" scripts/bench/chunk-cli.py corpus "$work/corpus" "$mb" "${sources[@]}"

edgerag_args=(--format jsonl --max-tokens 500 --max-lines 100000)
summary="$work/summary.txt"
: >"$summary"
for lang in rust python javascript markdown; do
  dir="$work/corpus/$lang"
  log "$lang: $(du -sh "$dir" | cut -f1)"
  hyperfine --warmup 1 --runs "$runs" --export-json "$work/$lang.json" \
    -n edgerag "$bin chunk $dir ${edgerag_args[*]} > /dev/null" \
    -n text-splitter "$py scripts/bench/chunk-cli.py split $dir 2000 > /dev/null"
  printf '%-10s %s\n' "$lang" "$("$py" scripts/bench/chunk-cli.py ratio "$work/$lang.json")" | tee -a "$summary"
done
log "summary ($(nproc) cores):"
cat "$summary" >&2
