//! Property tests for the code chunker (tree-sitter and heuristic paths): on mutated fixtures,
//! random token soup and arbitrary bytes, in every code language and under random limits, the
//! chunks satisfy `chunk::invariants` (every non-blank line covered, in order, valid spans,
//! within the limits, overlap only as configured, ids) and the same input gives the same chunks.
#![allow(clippy::unwrap_used)]
use std::path::Path;
use std::sync::OnceLock;

use edgerag_core::chunk::{assemble, code, invariants};
use edgerag_core::{chunk_bytes, chunk_text, ChunkConfig, Language};
use proptest::prelude::*;

/// One fixture per code language (path, language).
const SOURCES: &[(&str, Language)] = &[
    ("typescript/inventory_service.ts", Language::Typescript),
    ("tsx/ProductCard.tsx", Language::Tsx),
    ("javascript/router.js", Language::Javascript),
    ("python/scheduler.py", Language::Python),
    ("rust/order_book.rs", Language::Rust),
    ("go/cache.go", Language::Go),
    ("java/LibraryCatalog.java", Language::Java),
    ("c/ring_buffer.c", Language::C),
    ("cpp/matrix.cpp", Language::Cpp),
    ("csharp/OrderProcessor.cs", Language::Csharp),
    ("ruby/subscriptions.rb", Language::Ruby),
    ("php/UserRepository.php", Language::Php),
    ("kotlin/Playlist.kt", Language::Kotlin),
];

fn sources() -> &'static [(String, String)] {
    static CACHE: OnceLock<Vec<(String, String)>> = OnceLock::new();
    CACHE.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
        SOURCES
            .iter()
            .map(|(rel, _)| (rel.to_string(), std::fs::read_to_string(root.join(rel)).unwrap()))
            .collect()
    })
}

fn config() -> impl Strategy<Value = ChunkConfig> {
    (1usize..60, 1usize..400, 0usize..6, 0usize..8).prop_map(
        |(max_lines, max_tokens, overlap_lines, docstring_lines)| ChunkConfig {
            max_lines,
            max_tokens,
            overlap_lines,
            docstring_lines,
            ..ChunkConfig::default()
        },
    )
}

/// Fragments that stress parsers and the chunker: brackets, declarations, comments, strings,
/// decorators, indentation, CRLF, a BOM, multibyte text.
const SNIPPETS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ";",
    "\n",
    "\n\n",
    "\r\n",
    "    ",
    "\t",
    "class X {",
    "class Y:\n    ",
    "def f(a):\n    return a\n",
    "fn g() -> u8 {",
    "function h() {",
    "func (r *T) M() {",
    "end\n",
    "/**",
    "*/",
    "/// doc\n",
    "# comment\n",
    "// c\n",
    "\"",
    "'",
    "`",
    "#[derive(Debug)]\n",
    "@decorator\n",
    "export ",
    "interface I { }",
    "enum E { A }",
    "impl T for U {",
    "namespace N {",
    "module M\n",
    "template <typename T>\n",
    "public static void main(String[] a) {",
    "<?php\n",
    "é",
    "日本語",
    "🦀",
    "\u{feff}",
    "x = 1\n",
    "return;",
    "if (x) {",
    "} else {",
];

#[derive(Debug, Clone)]
enum Mutation {
    Delete { at: f64, len: usize },
    Insert { at: f64, snippet: &'static str },
    DuplicateLines { at: f64, count: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (0.0..1.0f64, 1usize..200).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (0.0..1.0f64, prop::sample::select(SNIPPETS))
            .prop_map(|(at, snippet)| Mutation::Insert { at, snippet }),
        (0.0..1.0f64, 1usize..30).prop_map(|(at, count)| Mutation::DuplicateLines { at, count }),
    ]
}

fn boundary(text: &str, at: f64) -> usize {
    let mut i = ((text.len() as f64) * at) as usize;
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i.min(text.len())
}

fn apply(text: &str, mutations: &[Mutation]) -> String {
    let mut text = text.to_string();
    for m in mutations {
        match *m {
            Mutation::Delete { at, len } => {
                let a = boundary(&text, at);
                let b = boundary(&text, ((a + len) as f64 / text.len().max(1) as f64).min(1.0));
                text.replace_range(a..b.max(a), "");
            }
            Mutation::Insert { at, snippet } => {
                let a = boundary(&text, at);
                text.insert_str(a, snippet);
            }
            Mutation::DuplicateLines { at, count } => {
                let lines: Vec<&str> = text.split_inclusive('\n').collect();
                if lines.is_empty() {
                    continue;
                }
                let start = ((lines.len() as f64) * at) as usize % lines.len();
                let end = (start + count).min(lines.len());
                let copy: String = lines[start..end].concat();
                let offset: usize = lines[..end].iter().map(|l| l.len()).sum();
                text.insert_str(offset, &copy);
            }
        }
    }
    text
}

/// Chunks with the syntax-aware chunker (through the public entry point) and checks everything.
fn check_syntax(path: &str, text: &str, config: &ChunkConfig) -> Result<(), TestCaseError> {
    let chunks = chunk_text(path, text, config);
    invariants::check(text, &chunks, config).map_err(|e| TestCaseError::fail(format!("{path}: {e}")))?;
    prop_assert_eq!(&chunks, &chunk_text(path, text, config), "not deterministic");
    Ok(())
}

/// Chunks with the grammar-free heuristics and checks the same invariants.
fn check_heuristic(
    path: &str,
    language: Language,
    text: &str,
    config: &ChunkConfig,
) -> Result<(), TestCaseError> {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let offset = text.len() - body.len();
    let mut pieces = code::chunk_heuristic(body, language, config).unwrap();
    for p in &mut pieces {
        p.start_byte += offset;
        p.end_byte += offset;
    }
    let chunks = assemble(path, text, language, pieces, config);
    invariants::check(text, &chunks, config)
        .map_err(|e| TestCaseError::fail(format!("{path} (heuristic): {e}")))?;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn mutated_sources_keep_the_invariants(
        index in 0..SOURCES.len(),
        mutations in prop::collection::vec(mutation(), 0..10),
        config in config(),
    ) {
        let (path, source) = &sources()[index];
        let text = apply(source, &mutations);
        check_syntax(path, &text, &config)?;
        check_heuristic(path, SOURCES[index].1, &text, &config)?;
    }

    #[test]
    fn token_soup_keeps_the_invariants(
        index in 0..SOURCES.len(),
        parts in prop::collection::vec(prop::sample::select(SNIPPETS), 0..150),
        config in config(),
    ) {
        let text: String = parts.concat();
        let path = &sources()[index].0;
        check_syntax(path, &text, &config)?;
        check_heuristic(path, SOURCES[index].1, &text, &config)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Any bytes under any code language: rejected with a reason or chunked correctly.
    #[test]
    fn arbitrary_bytes_never_panic(
        index in 0..SOURCES.len(),
        bytes in prop::collection::vec(any::<u8>(), 0..1500),
        config in config(),
    ) {
        let path = &sources()[index].0;
        if let Ok(chunks) = chunk_bytes(path, &bytes, &config) {
            let text = std::str::from_utf8(&bytes).unwrap();
            invariants::check(text, &chunks, &config).map_err(TestCaseError::fail)?;
        }
        let lossy = String::from_utf8_lossy(&bytes).replace('\0', " ");
        check_syntax(path, &lossy, &config)?;
        check_heuristic(path, SOURCES[index].1, &lossy, &config)?;
    }
}
