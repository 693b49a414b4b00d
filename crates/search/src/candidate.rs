//! What flows between the post-retrieval modules: a chunk with its current score and the trace
//! of how it got there.
use serde::Serialize;

use crate::ports::{ChunkKey, ChunkRecord};

/// Ranks and scores a candidate had in each retriever (1-based ranks).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RetrievalTrace {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector_rank: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector_score: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keyword_rank: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keyword_score: Option<f32>,
    /// Normalized weighted-RRF score (0..1).
    pub fused_score: f32,
}

/// A returned span that differs from the chunk itself (parent/child context windows).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SnippetOverride {
    pub text: String,
    pub start_line: u32,
    pub end_line: u32,
    /// Parent/child retrieval's fields.
    pub parent_symbol: String,
    /// The prose parent's id (documents chunked into parents and children); `None` for code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    pub parent_chars: u32,
    pub raw_score: f32,
    pub is_context_window: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub record: ChunkRecord,
    pub score: f32,
    pub trace: RetrievalTrace,
    /// Index of the sub-query that found it first.
    pub sub_query: Option<usize>,
    /// `span_hash` of the match this one was added next to.
    pub neighbor_of: Option<String>,
    pub snippet: Option<SnippetOverride>,
    /// Code graph: names of the symbols this chunk calls, and of those calling it (best first).
    pub uses: Vec<String>,
    pub used_by: Vec<String>,
}

impl Candidate {
    pub fn new(record: ChunkRecord, score: f32) -> Self {
        Candidate {
            record,
            score,
            trace: RetrievalTrace::default(),
            sub_query: None,
            neighbor_of: None,
            snippet: None,
            uses: Vec::new(),
            used_by: Vec::new(),
        }
    }

    pub fn key(&self) -> ChunkKey {
        ChunkKey::new(&self.record.namespace, &self.record.chunk.id)
    }

    /// Lines covered by what is returned.
    pub fn lines(&self) -> (u32, u32) {
        match &self.snippet {
            Some(s) => (s.start_line, s.end_line),
            None => (self.record.chunk.start_line, self.record.chunk.end_line),
        }
    }

    pub fn text(&self) -> &str {
        match &self.snippet {
            Some(s) => &s.text,
            None => &self.record.chunk.text,
        }
    }

    /// Whether the returned text is exactly the returned lines, one text line per line (chunks and
    /// parent/child windows are; a plan chunk's description is not), so it can be cut or joined
    /// by line.
    pub fn text_is_its_lines(&self) -> bool {
        let (start, end) = self.lines();
        let text = self.text();
        end >= start && text.strip_suffix('\n').unwrap_or(text).split('\n').count() as u32 == end - start + 1
    }

    /// Estimated tokens of the returned text (chars / 4, like the chunker).
    pub fn tokens(&self) -> u32 {
        match &self.snippet {
            Some(s) => s.text.chars().count().div_ceil(4) as u32,
            None => self.record.chunk.token_count.max(1),
        }
    }
}

/// Stable order: score descending, then namespace / path / line, so equal scores never shuffle.
pub fn sort_by_score(candidates: &mut [Candidate]) {
    candidates.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.record.namespace.cmp(&b.record.namespace))
            .then_with(|| a.record.chunk.path.cmp(&b.record.chunk.path))
            .then_with(|| a.record.chunk.start_line.cmp(&b.record.chunk.start_line))
            .then_with(|| a.record.chunk.id.cmp(&b.record.chunk.id))
    });
}

/// Keys in order, to tell whether a module reordered anything.
pub fn order_of(candidates: &[Candidate]) -> Vec<String> {
    candidates.iter().map(|c| format!("{}\u{0}{}", c.record.namespace, c.record.chunk.id)).collect()
}
