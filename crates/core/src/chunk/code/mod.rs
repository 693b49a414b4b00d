//! Syntax-aware code chunker (tree-sitter). Placeholder until the code chunker lands: `None` makes
//! the dispatcher fall back to the line chunker.
use super::{ChunkConfig, Piece};
use crate::lang::Language;

/// Pieces for `text` in `language`, or `None` when no syntax-aware chunker handles the language.
pub fn chunk(text: &str, language: Language, config: &ChunkConfig) -> Option<Vec<Piece>> {
    let _ = (text, language, config);
    None
}
