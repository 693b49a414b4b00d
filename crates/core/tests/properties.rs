//! Property tests for the text chunkers (Markdown, lines, `split_span`) and `chunk_bytes` on
//! arbitrary bytes: the invariants of `chunk::invariants` under random configurations, plus
//! determinism. Case counts are moderate so the suite stays fast.
#![allow(clippy::unwrap_used)]
use std::sync::Arc;

use edgerag_core::chunk::{invariants, lines, ChunkMetadata, ChunkType, TokenCounter};
use edgerag_core::{chunk_bytes, chunk_text, ChunkConfig};
use proptest::prelude::*;

fn config() -> impl Strategy<Value = ChunkConfig> {
    (1usize..40, 1usize..300, 0usize..6, 0u8..7).prop_map(|(max_lines, max_tokens, overlap_lines, depth)| {
        ChunkConfig {
            max_lines,
            max_tokens,
            overlap_lines,
            markdown_split_depth: depth,
            ..ChunkConfig::default()
        }
    })
}

/// Lines that exercise Markdown structure: headings (ATX and setext), fences, front matter
/// delimiters, lists, quotes, tables, HTML, blank lines, prose, Unicode and long lines.
fn markdown_line() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-zA-Zéß中 ]{0,30}".prop_map(|s| s),
        2 => Just(String::new()),
        2 => (1usize..7, "[a-z ]{0,12}").prop_map(|(n, t)| format!("{} {t}", "#".repeat(n))),
        1 => Just("```".to_string()),
        1 => Just("~~~rust".to_string()),
        1 => Just("# inside code?".to_string()),
        1 => Just("---".to_string()),
        1 => Just("+++".to_string()),
        1 => Just("===".to_string()),
        1 => Just("- item".to_string()),
        1 => Just("> # quoted".to_string()),
        1 => Just("| a | b |".to_string()),
        1 => Just("|---|---|".to_string()),
        1 => Just("<div>".to_string()),
        1 => Just("   ".to_string()),
        1 => "[a-z]{100,400}".prop_map(|s| s),
        1 => Just("🚀 ünïcödé\u{200d}".to_string()),
    ]
}

fn document(line: impl Strategy<Value = String>) -> impl Strategy<Value = String> {
    (prop::collection::vec(line, 0..60), any::<bool>(), any::<bool>(), any::<bool>()).prop_map(
        |(lines, crlf, bom, trailing)| {
            let mut text = String::new();
            if bom {
                text.push('\u{feff}');
            }
            text.push_str(&lines.join(if crlf { "\r\n" } else { "\n" }));
            if trailing {
                text.push('\n');
            }
            text
        },
    )
}

fn text_line() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "\\PC{0,40}".prop_map(|s| s),
        2 => Just(String::new()),
        1 => " {1,4}".prop_map(|s| s),
        1 => "[a-z;,(){} ]{200,600}".prop_map(|s| s),
        1 => "\\PC{0,3}\r".prop_map(|s| s),
    ]
}

/// Counts whitespace-separated words: a counter very different from chars / 4.
struct Words;
impl TokenCounter for Words {
    fn count(&self, text: &str) -> usize {
        text.split_whitespace().count()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn markdown_chunks_satisfy_the_invariants(text in document(markdown_line()), config in config()) {
        let chunks = chunk_text("doc.md", &text, &config);
        if let Err(e) = invariants::check(&text, &chunks, &config) {
            prop_assert!(false, "{e}\ntext: {text:?}\nchunks: {chunks:#?}");
        }
        prop_assert_eq!(&chunks, &chunk_text("doc.md", &text, &config), "not deterministic");
        // Breadcrumbs end with the symbol.
        for c in &chunks {
            if let Some(symbol) = &c.metadata.symbol_name {
                prop_assert_eq!(c.metadata.heading_path.last(), Some(symbol));
            }
        }
    }

    #[test]
    fn line_chunks_satisfy_the_invariants(text in document(text_line()), config in config()) {
        let chunks = chunk_text("notes.txt", &text, &config);
        if let Err(e) = invariants::check(&text, &chunks, &config) {
            prop_assert!(false, "{e}\ntext: {text:?}\nchunks: {chunks:#?}");
        }
        prop_assert_eq!(&chunks, &chunk_text("notes.txt", &text, &config));
    }

    #[test]
    fn a_custom_token_counter_bounds_every_chunk(
        text in document(markdown_line()),
        max_tokens in 1usize..40,
        markdown in any::<bool>(),
    ) {
        let config = ChunkConfig { max_tokens, max_lines: 30, ..ChunkConfig::default() }
            .with_token_counter(Arc::new(Words));
        let chunks = chunk_text(if markdown { "a.md" } else { "a.txt" }, &text, &config);
        if let Err(e) = invariants::check(&text, &chunks, &config) {
            prop_assert!(false, "{e}\ntext: {text:?}");
        }
    }

    #[test]
    fn split_span_stays_in_its_span_and_covers_it(
        text in document(text_line()),
        a in any::<prop::sample::Index>(),
        b in any::<prop::sample::Index>(),
        config in config(),
    ) {
        let bounds: Vec<usize> = (0..=text.len()).filter(|&i| text.is_char_boundary(i)).collect();
        let (mut start, mut end) = (bounds[a.index(bounds.len())], bounds[b.index(bounds.len())]);
        if start > end {
            std::mem::swap(&mut start, &mut end);
        }
        let meta = ChunkMetadata { symbol_name: Some("S".into()), ..ChunkMetadata::default() };
        let pieces = lines::split_span(&text, start, end, ChunkType::CodeFunction, &meta, &config);
        let mut covered = start;
        for (i, p) in pieces.iter().enumerate() {
            prop_assert!(start <= p.start_byte && p.start_byte < p.end_byte && p.end_byte <= end);
            prop_assert!(text.is_char_boundary(p.start_byte) && text.is_char_boundary(p.end_byte));
            let body = &text[p.start_byte..p.end_byte];
            prop_assert!(config.count_tokens(body) <= config.max_tokens.max(1) || body.chars().count() == 1);
            prop_assert!(body.matches('\n').count() < config.max_lines.max(1));
            prop_assert!(text[covered.min(p.start_byte)..p.start_byte].trim().is_empty(), "gap before piece {i}");
            prop_assert_eq!(p.chunk_type, ChunkType::CodeFunction);
            prop_assert_eq!(p.metadata.symbol_name.as_deref(), Some("S"));
            prop_assert!(i > 0 || p.metadata.overlap_lines == 0);
            prop_assert!(p.metadata.overlap_lines as usize <= config.overlap_lines);
            covered = covered.max(p.end_byte);
        }
        prop_assert!(text[covered..end].trim().is_empty(), "tail not covered");
    }

    #[test]
    fn arbitrary_bytes_never_panic(
        bytes in prop::collection::vec(any::<u8>(), 0..2000),
        config in config(),
        ext in prop::sample::select(vec!["md", "txt", "json", "rs", "ts", "py", ""]),
    ) {
        let path = format!("file.{ext}");
        if let Ok(chunks) = chunk_bytes(&path, &bytes, &config) {
            let text = std::str::from_utf8(&bytes).unwrap();
            if let Err(e) = invariants::check(text, &chunks, &config) {
                prop_assert!(false, "{e}\ntext: {text:?}");
            }
        }
    }
}
