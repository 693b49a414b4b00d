//! Code chunking: syntax-aware with tree-sitter where the language's grammar is compiled in
//! (`lang-*` features), else declaration heuristics ([`heuristic`]); `None` for
//! languages that are not code (the caller then uses the line chunker).
//!
//! See `syntax.rs` for the algorithm (units → split → merge) and `lang/` for the per-language
//! definitions (which node kinds are definitions, doc comments, attributes).
#[cfg(feature = "tree-sitter")]
use super::{lines, ChunkFallback};
use super::{ChunkConfig, Piece};
use crate::lang::Language;

#[cfg(feature = "tree-sitter")]
pub(crate) mod grammar;
mod heuristic;
#[cfg(feature = "tree-sitter")]
pub(crate) mod lang;
#[cfg(feature = "tree-sitter")]
mod syntax;
#[cfg(feature = "tree-sitter")]
pub(crate) use syntax::parse_bounded;

/// Pieces for `text` in `language`, or `None` when no code chunker handles the language.
pub fn chunk(text: &str, language: Language, config: &ChunkConfig) -> Option<Vec<Piece>> {
    #[cfg(feature = "tree-sitter")]
    {
        chunk_with_tree(text, language, config).0
    }
    #[cfg(not(feature = "tree-sitter"))]
    {
        heuristic::chunk(text, language, config)
    }
}

/// Pieces for `text` plus the parse tree they were cut from, so that a second pass (the code
/// graph) reads the same parse instead of parsing again. The tree is `None` when the language has
/// no grammar in this build (the pieces then come from the heuristics, or are `None` as in
/// [`chunk`]) or when the parse stopped at its budget: the pieces then come from the heuristics
/// (else from the line chunker), each marked [`ChunkFallback::ParseOverBudget`].
#[cfg(feature = "tree-sitter")]
pub fn chunk_with_tree(
    text: &str,
    language: Language,
    config: &ChunkConfig,
) -> (Option<Vec<Piece>>, Option<tree_sitter::Tree>) {
    let Some(grammar) = lang::grammar(language) else {
        return (heuristic::chunk(text, language, config), None);
    };
    match syntax::parse(text, grammar) {
        Some(tree) => {
            let pieces = syntax::chunk_tree(text, &tree, language, grammar, config);
            (Some(pieces), Some(tree))
        }
        None => {
            let mut pieces =
                heuristic::chunk(text, language, config).unwrap_or_else(|| lines::chunk(text, config));
            for piece in &mut pieces {
                piece.metadata.fallback = Some(ChunkFallback::ParseOverBudget);
            }
            (Some(pieces), None)
        }
    }
}

/// The tree-sitter language `language` is parsed with in this build, if any.
#[cfg(feature = "tree-sitter")]
pub fn ts_language(language: Language) -> Option<tree_sitter::Language> {
    lang::grammar(language).map(|g| (g.language)())
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
