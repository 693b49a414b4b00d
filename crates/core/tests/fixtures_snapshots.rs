//! Every file under `tests/fixtures/**` (Markdown, text, and each code language): first the
//! invariants (under several configurations), then an insta snapshot of a compact view of its
//! chunks under the default configuration.
#![allow(clippy::unwrap_used)]
use std::fmt::Write;
use std::path::Path;

use edgerag_core::chunk::invariants;
use edgerag_core::chunk::Preset;
use edgerag_core::{chunk_bytes, Chunk, ChunkConfig, Language};

/// Configurations whose output must satisfy the invariants for every fixture.
fn configs() -> Vec<(&'static str, ChunkConfig)> {
    vec![
        ("default", ChunkConfig::default()),
        ("compact", Preset::Compact.config()),
        ("small", ChunkConfig { max_lines: 12, max_tokens: 120, overlap_lines: 2, ..ChunkConfig::default() }),
        ("tiny", ChunkConfig { max_lines: 3, max_tokens: 16, overlap_lines: 1, ..ChunkConfig::default() }),
        ("no-overlap", ChunkConfig { overlap_lines: 0, max_lines: 20, ..ChunkConfig::default() }),
        ("depth-3", ChunkConfig { markdown_split_depth: 3, ..ChunkConfig::default() }),
    ]
}

/// Whether this build chunks `language` with a grammar that may be compiled out: snapshots of
/// such fixtures are only taken with all grammars (the default features), since without them the
/// same file falls back to the line chunker.
fn snapshot_depends_on_grammars(language: Language) -> bool {
    !matches!(
        language,
        Language::Markdown
            | Language::Text
            | Language::Json
            | Language::Yaml
            | Language::Toml
            | Language::Xml
            | Language::Html
            | Language::Css
            | Language::Scss
            | Language::Sql
            | Language::Shell
    )
}

/// One line per chunk: index, type, lines, tokens, overlap, symbol, breadcrumbs, keywords.
fn compact_view(chunks: &[Chunk]) -> String {
    let mut out = String::new();
    for c in chunks {
        write!(
            out,
            "#{} {} L{}-{} tokens={}",
            c.chunk_index,
            c.chunk_type.as_str(),
            c.start_line,
            c.end_line,
            c.token_count
        )
        .unwrap();
        if c.metadata.overlap_lines > 0 {
            write!(out, " overlap={}", c.metadata.overlap_lines).unwrap();
        }
        if let Some(level) = c.metadata.heading_level {
            write!(out, " h{level}").unwrap();
        }
        if let Some(symbol) = &c.metadata.symbol_name {
            write!(out, " symbol={symbol:?}").unwrap();
        }
        if let Some(parent) = &c.metadata.parent_symbol {
            write!(out, " parent={parent:?}").unwrap();
        }
        if !c.metadata.heading_path.is_empty() {
            write!(out, " path={:?}", c.metadata.heading_path).unwrap();
        }
        writeln!(out).unwrap();
        writeln!(
            out,
            "    first: {:?}",
            c.text.lines().next().unwrap_or("").chars().take(60).collect::<String>()
        )
        .unwrap();
        writeln!(out, "    keywords: {}", c.keywords.join(", ")).unwrap();
    }
    if chunks.is_empty() {
        out.push_str("(no chunks)\n");
    }
    out
}

#[test]
fn fixtures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    insta::glob!("../../../tests/fixtures", "**/*", |path| {
        if path.is_dir() {
            return;
        }
        let rel = path.strip_prefix(&root).unwrap_or(path).to_string_lossy().replace('\\', "/");
        let bytes = std::fs::read(path).unwrap();
        for (name, config) in configs() {
            let chunks = chunk_bytes(&rel, &bytes, &config).unwrap_or_else(|e| panic!("{rel}: {e}"));
            let text = std::str::from_utf8(&bytes).unwrap();
            if let Err(e) = invariants::check(text, &chunks, &config) {
                panic!("{rel} under config {name}: {e}");
            }
            let again = chunk_bytes(&rel, &bytes, &config).unwrap();
            assert_eq!(chunks, again, "{rel}: not deterministic");
        }
        let chunks = chunk_bytes(&rel, &bytes, &ChunkConfig::default()).unwrap();
        let language = chunks.first().map_or_else(|| Language::detect(&rel), |c| c.language);
        if snapshot_depends_on_grammars(language) && !cfg!(feature = "all-languages") {
            return;
        }
        insta::assert_snapshot!(compact_view(&chunks));
    });
}
