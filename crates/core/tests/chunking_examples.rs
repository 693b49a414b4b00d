//! The worked examples of the chunking contract (Markdown sections, keywords, default limits, text
//! blocks), as named tests. Lines are the true lines of the text (trailing blank lines are not part
//! of a span).
#![allow(clippy::unwrap_used)]
use edgerag_core::chunk::invariants;
use edgerag_core::{chunk_text, keywords, Chunk, ChunkConfig, ChunkType, Language};

fn lines(chunks: &[Chunk]) -> Vec<(u32, u32)> {
    chunks.iter().map(|c| (c.start_line, c.end_line)).collect()
}

const API_DOCS: &str = "# API Documentation

This document describes our API.

## Authentication

Use API keys for authentication.

### JWT Tokens

JWT tokens are preferred.

## Endpoints

Available endpoints below.
";

#[test]
fn api_documentation_example_gives_three_chunks() {
    let config = ChunkConfig::default();
    let chunks = chunk_text("docs/api.md", API_DOCS, &config);
    invariants::check(API_DOCS, &chunks, &config).unwrap();
    assert_eq!(lines(&chunks), [(1, 3), (5, 11), (13, 15)]);
    assert!(chunks.iter().all(|c| c.chunk_type == ChunkType::MarkdownSection));
    assert!(chunks.iter().all(|c| c.language == Language::Markdown));
    assert_eq!(chunks[0].text, "# API Documentation\n\nThis document describes our API.");
    assert!(chunks[1].text.contains("### JWT Tokens"), "the H3 stays inside its H2");
    let symbols: Vec<_> = chunks.iter().map(|c| c.metadata.symbol_name.as_deref().unwrap()).collect();
    assert_eq!(symbols, ["API Documentation", "Authentication", "Endpoints"]);
    let levels: Vec<_> = chunks.iter().map(|c| c.metadata.heading_level.unwrap()).collect();
    assert_eq!(levels, [1, 2, 2]);
    assert_eq!(chunks[1].metadata.heading_path, ["API Documentation", "Authentication"]);
    assert_eq!(chunks[2].metadata.heading_path, ["API Documentation", "Endpoints"]);
    assert!(chunks.iter().all(|c| c.metadata.overlap_lines == 0));
}

const NESTED: &str = "# Main Title
Intro content.

## Section 1
Content here.

### Subsection 1.1
More content.

## Section 2
Final content.
";

#[test]
fn markdown_example_h3_stays_in_its_h2() {
    let config = ChunkConfig::default();
    let chunks = chunk_text("README.md", NESTED, &config);
    invariants::check(NESTED, &chunks, &config).unwrap();
    // Chunks start at the headings' true lines 1, 4 and 10.
    assert_eq!(lines(&chunks), [(1, 2), (4, 8), (10, 11)]);
    assert_eq!(chunks[1].metadata.symbol_name.as_deref(), Some("Section 1"));
    assert!(chunks[1].text.ends_with("### Subsection 1.1\nMore content."));
    assert_eq!(chunks[2].metadata.symbol_name.as_deref(), Some("Section 2"));
}

#[test]
fn content_before_the_first_heading_is_its_own_chunk() {
    let text = "Preamble line.\n\n# Title\n\nBody.\n";
    let chunks = chunk_text("a.md", text, &ChunkConfig::default());
    assert_eq!(lines(&chunks), [(1, 1), (3, 5)]);
    assert_eq!(chunks[0].metadata.heading_path, Vec::<String>::new());
    assert_eq!(chunks[0].metadata.symbol_name, None);
}

#[test]
fn keywords_of_a_typescript_signature() {
    let kw = keywords::extract(
        "export async function getUserData(id: string): Promise<User>",
        Language::Typescript,
    );
    for want in ["export", "async", "function", "getuserdata", "string", "promise", "user"] {
        assert!(kw.iter().any(|k| k == want), "{want} missing from {kw:?}");
    }
    assert!(kw.len() <= 20);
}

#[test]
fn documented_limits_are_the_default() {
    let c = ChunkConfig::default();
    assert_eq!((c.max_lines, c.max_tokens, c.overlap_lines, c.docstring_lines), (100, 2000, 3, 5));
    assert_eq!(c.count_tokens("abcdefghi"), 3, "tokens ≈ chars / 4, rounded up");
}

#[test]
fn other_files_are_text_blocks_with_overlap() {
    let text: String = (1..=250).map(|i| format!("row {i}\n")).collect();
    let config = ChunkConfig::default();
    let chunks = chunk_text("data.txt", &text, &config);
    invariants::check(&text, &chunks, &config).unwrap();
    assert!(chunks.iter().all(|c| c.chunk_type == ChunkType::TextBlock));
    assert_eq!(lines(&chunks), [(1, 100), (98, 197), (195, 250)]);
    assert_eq!(chunks[0].metadata.overlap_lines, 0, "the first chunk never gets overlap");
    assert_eq!(chunks[1].metadata.overlap_lines, 3);
}

#[test]
fn ids_are_deterministic_and_position_sensitive() {
    let config = ChunkConfig::default();
    let a = chunk_text("docs/api.md", API_DOCS, &config);
    let b = chunk_text("docs/api.md", API_DOCS, &config);
    assert_eq!(a, b);
    let moved = chunk_text("docs/api.md", &format!("\n{API_DOCS}"), &config);
    assert_eq!(a[0].text_hash, moved[0].text_hash);
    assert_ne!(a[0].id, moved[0].id);
    assert_ne!(a[0].id, chunk_text("other.md", API_DOCS, &config)[0].id);
}
