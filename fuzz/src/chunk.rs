//! The chunker targets' input and invariants.
//!
//! Input: a header line `<path> [max_lines max_tokens overlap_lines docstring_lines md_depth]`,
//! then the file's bytes. The path picks the language (as in indexing); the numbers vary the
//! config so the size limits, overlap and heading depth are fuzzed too. A fixture becomes a seed
//! by prefixing its path: `printf 'x.rs\n'; cat file.rs`.
use edgerag_core::chunk::{assemble, chunk_bytes, invariants, Chunk, ChunkConfig, ChunkError, Piece};
use edgerag_core::Language;

pub struct Input<'a> {
    pub path: String,
    pub config: ChunkConfig,
    pub bytes: &'a [u8],
}

/// Decode an input (never fails: missing or bad numbers keep the defaults).
pub fn decode(data: &[u8]) -> Input<'_> {
    let (header, bytes) = match data.iter().position(|&b| b == b'\n') {
        Some(nl) => (&data[..nl], &data[nl + 1..]),
        None => (data, &[][..]),
    };
    let header = String::from_utf8_lossy(header);
    let mut words = header.split_whitespace();
    let path = words.next().unwrap_or("file.txt").to_string();
    let mut nums = words.map(|w| w.parse::<usize>().ok());
    let mut next = |default: usize, max: usize| nums.next().flatten().unwrap_or(default).min(max);
    let defaults = ChunkConfig::default();
    let config = ChunkConfig {
        // 0 is kept: the chunkers must treat it as 1 (`line_limit`, `token_limit`).
        max_lines: next(defaults.max_lines, 400),
        max_tokens: next(defaults.max_tokens, 4000),
        overlap_lines: next(defaults.overlap_lines, 12),
        docstring_lines: next(defaults.docstring_lines, 12),
        markdown_split_depth: next(defaults.markdown_split_depth as usize, 7) as u8,
        // Small enough that the fuzzer reaches the limit, large enough for every fixture.
        max_file_bytes: 256 * 1024,
        ..defaults
    };
    Input { path, config, bytes }
}

/// Chunk `input` as `language` twice and check every invariant of the result.
pub fn check_chunks(input: &Input<'_>, language: Language) {
    let config = ChunkConfig { language: Some(language), ..input.config.clone() };
    let first = chunk_bytes(&input.path, input.bytes, &config);
    let second = chunk_bytes(&input.path, input.bytes, &config.clone());
    assert_eq!(first, second, "chunking {:?} as {language:?} is not deterministic", input.path);
    match first {
        Err(e) => check_refusal(input.bytes, &config, &e),
        Ok(chunks) => {
            let text = std::str::from_utf8(input.bytes).expect("accepted bytes are UTF-8");
            check_file(text, &chunks, &config, &input.path, language);
        }
    }
}

/// Chunks assembled from `pieces` (spans into `text` after its BOM) must satisfy the invariants.
pub fn check_pieces(input: &Input<'_>, language: Language, text: &str, pieces: Vec<Piece>) {
    let config = ChunkConfig { language: Some(language), ..input.config.clone() };
    let chunks = assemble(&input.path, text, language, pieces, &config);
    check_file(text, &chunks, &config, &input.path, language);
}

fn check_file(text: &str, chunks: &[Chunk], config: &ChunkConfig, path: &str, language: Language) {
    if let Err(e) = invariants::check(text, chunks, config) {
        panic!("{path:?} as {language:?} with {config:?}: {e}");
    }
    // A leading byte order mark is never chunked (it is not whitespace to `trim`).
    if text.strip_prefix('\u{feff}').unwrap_or(text).trim().is_empty() {
        return;
    }
    assert!(!chunks.is_empty(), "{path:?}: a file with text gave no chunks");
    let mut ids: Vec<&str> = chunks.iter().map(|c| c.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), chunks.len(), "{path:?}: two chunks share an id");
    for c in chunks {
        assert_eq!(c.path, path, "a chunk names another path");
    }
}

/// A refused file is refused for the documented reason, in the documented order.
fn check_refusal(bytes: &[u8], config: &ChunkConfig, e: &ChunkError) {
    let expected = if bytes.len() > config.max_file_bytes {
        ChunkError::TooLarge { size: bytes.len(), limit: config.max_file_bytes }
    } else if bytes.contains(&0) {
        ChunkError::Binary
    } else {
        match std::str::from_utf8(bytes) {
            Err(u) => ChunkError::InvalidUtf8 { offset: u.valid_up_to() },
            Ok(_) => panic!("valid text was refused: {e}"),
        }
    };
    assert_eq!(e, &expected);
    assert!(["FILE_TOO_LARGE", "BINARY_FILE", "INVALID_UTF8"].contains(&e.code()));
}
