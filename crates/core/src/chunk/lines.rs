//! Line chunker (placeholder: fixed windows of `max_lines`; the real one prefers blank lines,
//! applies overlap and the token limit).
use super::{ChunkConfig, ChunkMetadata, ChunkType, Piece};

pub fn chunk(text: &str, config: &ChunkConfig) -> Vec<Piece> {
    let starts = super::assemble::line_starts(text);
    if text.is_empty() {
        return Vec::new();
    }
    let step = config.max_lines.max(1);
    starts
        .chunks(step)
        .enumerate()
        .map(|(i, window)| {
            let start = window[0];
            let end = starts.get((i + 1) * step).copied().unwrap_or(text.len());
            Piece {
                start_byte: start,
                end_byte: end,
                chunk_type: ChunkType::TextBlock,
                metadata: ChunkMetadata::default(),
            }
        })
        .collect()
}
