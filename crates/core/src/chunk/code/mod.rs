//! Code chunking: syntax-aware with tree-sitter where the language's grammar is compiled in
//! (`lang-*` features), else declaration heuristics ([`heuristic`]); `None` for
//! languages that are not code (the caller then uses the line chunker).
//!
//! See `syntax.rs` for the algorithm (units → split → merge) and `lang/` for the per-language
//! definitions (which node kinds are definitions, doc comments, attributes).
use super::{ChunkConfig, Piece};
use crate::lang::Language;

#[cfg(feature = "tree-sitter")]
mod grammar;
mod heuristic;
#[cfg(feature = "tree-sitter")]
mod lang;
#[cfg(feature = "tree-sitter")]
mod syntax;

/// Pieces for `text` in `language`, or `None` when no code chunker handles the language.
pub fn chunk(text: &str, language: Language, config: &ChunkConfig) -> Option<Vec<Piece>> {
    #[cfg(feature = "tree-sitter")]
    if let Some(grammar) = lang::grammar(language) {
        if let Some(pieces) = syntax::chunk(text, language, grammar, config) {
            return Some(pieces);
        }
    }
    heuristic::chunk(text, language, config)
}

/// Whether `language` is chunked with a tree-sitter grammar in this build.
pub fn has_grammar(language: Language) -> bool {
    #[cfg(feature = "tree-sitter")]
    {
        lang::grammar(language).is_some()
    }
    #[cfg(not(feature = "tree-sitter"))]
    {
        let _ = language;
        false
    }
}

/// Chunks `text` with the grammar-free heuristics even when a grammar exists (for comparison
/// and tests).
pub fn chunk_heuristic(text: &str, language: Language, config: &ChunkConfig) -> Option<Vec<Piece>> {
    heuristic::chunk(text, language, config)
}
