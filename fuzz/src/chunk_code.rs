//! Target `chunk_code`: the code chunker in every language — tree-sitter where a grammar is
//! compiled in, the declaration heuristics otherwise and also for every grammar language (the
//! fallback when a parse fails).
//!
//! Invariants: [`edgerag_core::chunk::invariants`] (spans in the input and on char boundaries,
//! order, coverage of every non-blank char, line numbers, size limits, overlap, ids and hashes
//! recomputed from the text), the same chunks and ids from a second run, unique ids, and a
//! refused file refused for the right reason.
use edgerag_core::chunk::code;
use edgerag_core::Language;

use crate::chunk::{check_chunks, check_pieces, decode};

pub fn check(data: &[u8]) {
    let input = decode(data);
    let language = code_language(&input.path);
    check_chunks(&input, language);
    if let Ok(text) = std::str::from_utf8(input.bytes) {
        if text.len() <= input.config.max_file_bytes && !text.contains('\0') {
            let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
            if let Some(mut pieces) = code::chunk_heuristic(&text[bom..], language, &input.config) {
                for p in &mut pieces {
                    p.start_byte += bom;
                    p.end_byte += bom;
                }
                check_pieces(&input, language, text, pieces);
            }
        }
    }
}

/// The path's language when it is code; Markdown and plain text map onto a grammar language
/// (chosen by the path's length) so that every input exercises a code chunker.
pub fn code_language(path: &str) -> Language {
    match Language::detect(path) {
        Language::Markdown | Language::Text => {
            let grammars: Vec<Language> =
                Language::ALL.iter().copied().filter(|l| code::has_grammar(*l)).collect();
            grammars[path.len() % grammars.len()]
        }
        other => other,
    }
}
