use std::collections::HashMap;

use super::{Chunk, ChunkConfig, ChunkMetadata, ChunkType, CHUNK_SCHEMA_VERSION};
use crate::{ids, keywords, lang::Language};

/// Where a chunker decided to cut: a byte span of the file plus what it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Piece {
    pub start_byte: usize,
    pub end_byte: usize,
    pub chunk_type: ChunkType,
    pub metadata: ChunkMetadata,
}

/// Turn pieces (in file order, spans on char boundaries) into finished chunks.
pub fn assemble(
    path: &str,
    text: &str,
    language: Language,
    pieces: Vec<Piece>,
    config: &ChunkConfig,
) -> Vec<Chunk> {
    let line_starts = line_starts(text);
    let line_of = |byte: usize| -> u32 {
        // Number of line starts at or before `byte` = 1-based line number.
        line_starts.partition_point(|&s| s <= byte) as u32
    };
    // Pieces with the same text on the same lines so far (a long line cut into identical pieces).
    let mut seen: HashMap<String, u32> = HashMap::new();
    pieces
        .into_iter()
        .enumerate()
        .map(|(index, piece)| {
            let body = &text[piece.start_byte..piece.end_byte];
            let start_line = line_of(piece.start_byte);
            // The last byte of the span decides the end line (a trailing '\n' belongs to its line).
            let end_line = line_of(piece.end_byte.saturating_sub(1).max(piece.start_byte));
            let mut metadata = piece.metadata;
            metadata.span_hash = ids::span_hash(path, start_line, end_line);
            let base = ids::chunk_id(body, path, start_line, end_line);
            let repeat = seen.entry(base.clone()).or_insert(0);
            let id = if *repeat == 0 {
                base
            } else {
                ids::repeated_chunk_id(body, path, start_line, end_line, *repeat)
            };
            *repeat += 1;
            Chunk {
                id,
                text_hash: ids::text_hash(body),
                path: path.to_string(),
                language,
                chunk_type: piece.chunk_type,
                text: body.to_string(),
                start_line,
                end_line,
                start_byte: piece.start_byte,
                end_byte: piece.end_byte,
                chunk_index: index as u32,
                token_count: config.count_tokens(body) as u32,
                keywords: keywords::extract(body, language),
                metadata,
                updated_at: None,
                version: CHUNK_SCHEMA_VERSION,
            }
        })
        .collect()
}

/// Byte offsets at which each line starts (line 1 starts at 0).
pub(crate) fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1).filter(|&i| i < text.len()))
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::chunk::{chunk_text, invariants, ChunkConfig};

    #[test]
    fn identical_pieces_of_one_long_line_get_distinct_ids() {
        // A line with no break opportunity is cut by size into pieces with the same text on the
        // same line; found by the `chunk_text` fuzz target.
        let text = "ab".repeat(400);
        let config = ChunkConfig::default().with_max_tokens(10);
        let chunks = chunk_text("min.txt", &text, &config);
        assert!(chunks.len() > 2 && chunks.iter().all(|c| c.text == chunks[0].text), "identical pieces");
        let mut ids: Vec<&str> = chunks.iter().map(|c| c.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), chunks.len());
        invariants::check(&text, &chunks, &config).expect("invariants");
        assert_eq!(chunks, chunk_text("min.txt", &text, &config), "the ids are stable");
    }
}
