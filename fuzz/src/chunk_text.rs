//! Target `chunk_text`: the Markdown chunker (paths ending in `.md`) and the line chunker
//! (every other path), with the same invariants as `chunk_code`.
use edgerag_core::Language;

use crate::chunk::{check_chunks, decode};

pub fn check(data: &[u8]) {
    let input = decode(data);
    let language = match Language::detect(&input.path) {
        Language::Markdown => Language::Markdown,
        _ => Language::Text,
    };
    check_chunks(&input, language);
}
