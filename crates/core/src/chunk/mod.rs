//! Chunking: one file in, ordered chunks out.
//!
//! Each chunker (`markdown`, `code`, `lines`) only decides *where* to cut: it returns [`Piece`]s
//! (byte spans plus type and metadata). [`assemble`] turns pieces into [`Chunk`]s — lines, ids,
//! hashes, keywords, token counts — so every chunker gets identical bookkeeping.

mod assemble;
pub mod code;
mod config;
#[doc(hidden)]
pub mod invariants;
pub mod lines;
pub mod markdown;
pub mod parent_child;
mod types;

pub use assemble::{assemble, Piece};
pub use config::{CharsPerToken, ChunkConfig, Preset, TokenCounter, TokenCounterRef};
pub use types::{Chunk, ChunkFallback, ChunkMetadata, ChunkType, CHUNK_SCHEMA_VERSION};

use crate::lang::Language;

/// Why a file was not chunked. Chunking valid text never fails; only the bytes can be unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[serde(tag = "code", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ChunkError {
    #[error("file is {size} bytes, over the {limit}-byte limit")]
    TooLarge { size: usize, limit: usize },
    #[error("file looks binary (contains NUL bytes)")]
    Binary,
    #[error("file is not valid UTF-8 (first bad byte at offset {offset})")]
    InvalidUtf8 { offset: usize },
}

impl ChunkError {
    /// Stable machine-readable code, used in API errors and skip reasons.
    pub fn code(&self) -> &'static str {
        match self {
            ChunkError::TooLarge { .. } => "FILE_TOO_LARGE",
            ChunkError::Binary => "BINARY_FILE",
            ChunkError::InvalidUtf8 { .. } => "INVALID_UTF8",
        }
    }
}

/// Chunk raw file bytes: rejects oversize, binary and non-UTF-8 input with a reason.
pub fn chunk_bytes(path: &str, bytes: &[u8], config: &ChunkConfig) -> Result<Vec<Chunk>, ChunkError> {
    if bytes.len() > config.max_file_bytes {
        return Err(ChunkError::TooLarge { size: bytes.len(), limit: config.max_file_bytes });
    }
    if bytes.contains(&0) {
        return Err(ChunkError::Binary);
    }
    let text = std::str::from_utf8(bytes).map_err(|e| ChunkError::InvalidUtf8 { offset: e.valid_up_to() })?;
    Ok(chunk_text(path, text, config))
}

/// Chunk a file's text. The language comes from the path (see [`Language::detect`]) unless the
/// config forces one. Deterministic: the same `(path, text, config)` always gives the same chunks.
pub fn chunk_text(path: &str, text: &str, config: &ChunkConfig) -> Vec<Chunk> {
    let language = config.language.unwrap_or_else(|| Language::detect(path));
    let pieces = chunk_pieces(text, language, config);
    assemble(path, text, language, pieces, config)
}

/// Where `text` is cut, before bookkeeping: Markdown → [`markdown::chunk`]; a language with a
/// syntax-aware chunker → [`code::chunk`]; everything else → [`lines::chunk`]. A UTF-8 byte order
/// mark is skipped (no chunk contains it); spans are offsets into the full `text`.
pub fn chunk_pieces(text: &str, language: Language, config: &ChunkConfig) -> Vec<Piece> {
    let bom = if text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
    let body = &text[bom..];
    let mut pieces = match language {
        Language::Markdown => markdown::chunk(body, config),
        _ => code::chunk(body, language, config).unwrap_or_else(|| lines::chunk(body, config)),
    };
    if bom > 0 {
        for piece in &mut pieces {
            piece.start_byte += bom;
            piece.end_byte += bom;
        }
    }
    pieces
}
