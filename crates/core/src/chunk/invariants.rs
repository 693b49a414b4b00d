//! The invariants every chunker's output must satisfy, as one checker shared by the unit,
//! snapshot and property tests of every chunker (text and code).
//!
//! For the chunks of one file (`text` is the whole file, byte order mark included):
//! 1. **coverage** — every non-whitespace char (outside a leading BOM) is inside some chunk;
//!    only whitespace (blank separator lines, trailing spaces) may be left out;
//! 2. **order** — chunk starts and ends strictly increase, `chunk_index` is 0, 1, 2, …;
//! 3. **spans** — non-empty, on char boundaries, within the file, after the BOM, and
//!    `text == file[start_byte..end_byte]`;
//! 4. **lines** — `start_line` / `end_line` are the 1-based lines of the first and last byte;
//! 5. **limits** — `token_count` is the configured count of the text, at most `max_tokens`
//!    (a single char over the limit is the only exception) and at most `max_lines` lines;
//! 6. **overlap** — a chunk repeats bytes of the previous chunk only as whole lines, exactly
//!    `metadata.overlap_lines` of them, never more than `overlap_lines`, never in the first chunk;
//!    a chunk that repeats nothing has `overlap_lines` 0;
//! 7. **ids** — `id`, `text_hash`, `span_hash` follow [`crate::ids`] (a repeat of the same text on
//!    the same lines takes [`crate::ids::repeated_chunk_id`]), so no two chunks share an id;
//!    ≤ 20 unique keywords.
use super::{Chunk, ChunkConfig};
use crate::ids;

/// Check `chunks` (all the chunks of one file) against the invariants above.
pub fn check(text: &str, chunks: &[Chunk], config: &ChunkConfig) -> Result<(), String> {
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let newlines: Vec<usize> = text.match_indices('\n').map(|(i, _)| i).collect();
    let line_of = |byte: usize| 1 + newlines.partition_point(|&nl| nl < byte) as u32;
    let mut covered_to = bom;
    let mut seen: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
    for (i, c) in chunks.iter().enumerate() {
        let at = |msg: String| format!("chunk {i} ({}..{}): {msg}", c.start_byte, c.end_byte);
        if c.chunk_index as usize != i {
            return Err(at(format!("chunk_index is {}", c.chunk_index)));
        }
        if c.start_byte >= c.end_byte || c.end_byte > text.len() || c.start_byte < bom {
            return Err(at("empty or out-of-range span".into()));
        }
        if !text.is_char_boundary(c.start_byte) || !text.is_char_boundary(c.end_byte) {
            return Err(at("span not on char boundaries".into()));
        }
        let slice = &text[c.start_byte..c.end_byte];
        if c.text != slice {
            return Err(at("text differs from the file slice".into()));
        }
        let (start_line, end_line) = (line_of(c.start_byte), line_of(c.end_byte - 1));
        if (c.start_line, c.end_line) != (start_line, end_line) {
            return Err(at(format!(
                "lines {}..{} but the bytes are on lines {start_line}..{end_line}",
                c.start_line, c.end_line
            )));
        }
        let lines = (end_line - start_line + 1) as usize;
        if lines > config.line_limit() {
            return Err(at(format!("{lines} lines, over max_lines {}", config.line_limit())));
        }
        let tokens = config.count_tokens(slice);
        if c.token_count as usize != tokens {
            return Err(at(format!("token_count {} but the text counts {tokens}", c.token_count)));
        }
        if tokens > config.token_limit() && slice.chars().nth(1).is_some() {
            return Err(at(format!("{tokens} tokens, over max_tokens {}", config.token_limit())));
        }
        if i == 0 && c.metadata.overlap_lines != 0 {
            return Err(at("the first chunk has overlap".into()));
        }
        if let Some(prev) = i.checked_sub(1).map(|p| &chunks[p]) {
            if c.start_byte <= prev.start_byte || c.end_byte <= prev.end_byte {
                return Err(at(format!("out of order after {}..{}", prev.start_byte, prev.end_byte)));
            }
            if c.start_byte < prev.end_byte {
                // Overlap: whole lines, counted exactly, within the configured amount.
                let whole_line = c.start_byte == 0 || text.as_bytes()[c.start_byte - 1] == b'\n';
                let shared = line_of(prev.end_byte - 1) - start_line + 1;
                if !whole_line {
                    return Err(at("overlap does not start at a line start".into()));
                }
                if shared != c.metadata.overlap_lines {
                    return Err(at(format!(
                        "repeats {shared} lines of the previous chunk but overlap_lines is {}",
                        c.metadata.overlap_lines
                    )));
                }
                if shared as usize > config.overlap_limit() {
                    return Err(at(format!("overlap {shared} over overlap_lines {}", config.overlap_lines)));
                }
            } else if c.metadata.overlap_lines != 0 {
                return Err(at(format!("overlap_lines {} but nothing repeated", c.metadata.overlap_lines)));
            }
        }
        if let Some(gap) = text.get(covered_to..c.start_byte) {
            if let Some(pos) = gap.find(|ch: char| !ch.is_whitespace()) {
                return Err(at(format!(
                    "byte {} ({:?}) before it is in no chunk",
                    covered_to + pos,
                    &gap[pos..]
                )));
            }
        }
        covered_to = covered_to.max(c.end_byte);
        let repeat = seen.entry(ids::chunk_id(slice, &c.path, start_line, end_line)).or_insert(0);
        if c.id != ids::repeated_chunk_id(slice, &c.path, start_line, end_line, *repeat) {
            return Err(at("id does not follow ids::chunk_id".into()));
        }
        *repeat += 1;
        if c.text_hash != ids::text_hash(slice) {
            return Err(at("text_hash does not follow ids::text_hash".into()));
        }
        if c.metadata.span_hash != ids::span_hash(&c.path, start_line, end_line) {
            return Err(at("span_hash does not follow ids::span_hash".into()));
        }
        if c.keywords.len() > crate::keywords::MAX_KEYWORDS {
            return Err(at(format!("{} keywords", c.keywords.len())));
        }
        let mut unique = c.keywords.clone();
        unique.sort();
        unique.dedup();
        if unique.len() != c.keywords.len() {
            return Err(at("duplicate keywords".into()));
        }
    }
    if let Some(pos) = text.get(covered_to..).and_then(|rest| rest.find(|ch: char| !ch.is_whitespace())) {
        return Err(format!("byte {} after the last chunk is in no chunk", covered_to + pos));
    }
    Ok(())
}
