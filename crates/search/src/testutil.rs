//! Builders for unit tests.
#![allow(clippy::unwrap_used)]
use edgerag_core::chunk::CHUNK_SCHEMA_VERSION;
use edgerag_core::{ids, Chunk, ChunkMetadata, ChunkType, Language};

use crate::candidate::Candidate;
use crate::ports::ChunkRecord;

/// A chunk of `path` starting at `start_line`, with `index` as its chunk index.
pub fn chunk_at(path: &str, chunk_type: ChunkType, text: &str, start_line: u32, index: u32) -> Chunk {
    let lines = text.lines().count().max(1) as u32;
    let end_line = start_line + lines - 1;
    Chunk {
        id: ids::chunk_id(text, path, start_line, end_line),
        text_hash: ids::text_hash(text),
        path: path.to_string(),
        language: Language::detect(path),
        chunk_type,
        text: text.to_string(),
        start_line,
        end_line,
        start_byte: 0,
        end_byte: text.len(),
        chunk_index: index,
        token_count: text.chars().count().div_ceil(4) as u32,
        keywords: Vec::new(),
        metadata: ChunkMetadata {
            span_hash: ids::span_hash(path, start_line, end_line),
            ..Default::default()
        },
        updated_at: None,
        version: CHUNK_SCHEMA_VERSION,
    }
}

pub fn record(namespace: &str, chunk: Chunk) -> ChunkRecord {
    ChunkRecord { namespace: namespace.to_string(), chunk, tags: Vec::new() }
}

pub fn candidate(path: &str, chunk_type: ChunkType, text: &str, score: f32) -> Candidate {
    Candidate::new(record("repo:t/t", chunk_at(path, chunk_type, text, 1, 0)), score)
}

pub use crate::memory::block_on;
