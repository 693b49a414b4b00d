//! Response v4: matches, `rerankApplied`, `augmentedPrompt`, `instructions`,
//! `contextMissing`, `noResults`, `noResultsReason`, `appliedModules`, `warnings`.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Why there is nothing to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum NoResultsReason {
    /// The index was searched and nothing relevant was found.
    ContextNotFound,
    /// The repository has no READY index (yet).
    IndexNotReady,
}

impl NoResultsReason {
    /// The code as the response writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            NoResultsReason::ContextNotFound => "CONTEXT_NOT_FOUND",
            NoResultsReason::IndexNotReady => "INDEX_NOT_READY",
        }
    }
}

/// Per-match metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MatchMetadata {
    /// Repository the match comes from (always set; what tells global results apart).
    pub repo_owner: String,
    pub repo_name: String,
    pub chunk_id: String,
    /// The chunk's content hash (`text_hash`), the dedup key of multi-query.
    pub chunk_hash: String,
    pub span_hash: String,
    /// `code-function`, `markdown-section`, ...
    pub chunk_type: String,
    pub chunk_index: u32,
    pub token_count: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_symbol: Option<String>,
    /// Code: the id of the graph node the chunk belongs to (the innermost symbol holding it), as
    /// `repo.symbol_references` takes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol_id: Option<String>,
    /// Code: names of the symbols the chunk calls (a few, best resolved first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uses: Vec<String>,
    /// Code: names of the symbols that call it (a few, best resolved and nearest first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub used_by: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub heading_path: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The sub-query that found this match first (multi-query).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated_by_sub_query: Option<String>,
    /// Set on chunks added by neighbour expansion: the `spanHash` of the match they surround.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neighbor_of_span_hash: Option<String>,
    /// Rank in each retriever (1-based) and the fused score, when retrieved directly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_rank: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword_rank: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fused_score: Option<f32>,
    /// Parent/child retrieval: the parent's size and whether the snippet is a window of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_chars: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_score: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_context_window: Option<bool>,
    /// Two-stage retrieval over a document chunked into parents and children: the parent
    /// returned (whole, or a window of it) for the matched child `chunkId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
}

/// One piece of context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Match {
    pub path: String,
    pub snippet: String,
    /// Relevance after every module (higher is better; comparable within one response).
    pub score: f32,
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    pub language: String,
    /// Definition name or heading; `null` when the chunk has none.
    #[schemars(required, schema_with = "nullable_string_schema")]
    pub symbol: Option<String>,
    pub metadata: MatchMetadata,
}

/// Per-module timing (debug output).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModuleTiming {
    pub module: String,
    pub ms: f64,
}

/// Extra detail for `debug: true`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchDebug {
    pub sub_queries: Vec<String>,
    /// The FTS5 expression of the first sub-query.
    pub keyword_query: Option<String>,
    pub timings: Vec<ModuleTiming>,
    pub total_ms: f64,
    /// The resolved plan (profile after the guard).
    pub plan: serde_json::Value,
    /// The candidates in their order just before the topK cut (after the reranks and span
    /// merging; at most [`MAX_RANKING`]): what each retriever made of them and the score they
    /// ended with. Why a match is where it is, and what fell just short.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranking: Vec<RankedCandidate>,
}

/// Most candidates `debug.ranking` lists.
pub const MAX_RANKING: usize = 100;

/// One candidate of `debug.ranking`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RankedCandidate {
    pub path: String,
    /// 1-based, inclusive: the lines it would be returned with.
    pub start_line: u32,
    pub end_line: u32,
    pub symbol: Option<String>,
    pub chunk_type: String,
    /// The score after every module so far.
    pub score: f32,
    /// The fused retrieval score (0..1) it started from.
    pub fused_score: f32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_rank: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_score: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword_rank: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword_score: Option<f32>,
}

/// The v4 response of every search tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchResponse {
    pub matches: Vec<Match>,
    /// Whether any rerank module changed the order.
    pub rerank_applied: bool,
    /// A ready prompt: the context (matches) followed by the question.
    pub augmented_prompt: String,
    /// Guidance for the agent, from the instructions template.
    pub instructions: String,
    /// No context was found for the question.
    pub context_missing: bool,
    /// Retrieval returned nothing (also when generation may continue without context).
    pub no_results: bool,
    /// `CONTEXT_NOT_FOUND`, `INDEX_NOT_READY`, or `null` when there are results.
    #[schemars(required, schema_with = "nullable_reason_schema")]
    pub no_results_reason: Option<NoResultsReason>,
    /// Every module that ran, always including `profile:<name>`.
    pub applied_modules: Vec<String>,
    /// Every automatic fix, clamp and fallback. Empty when the request passed untouched.
    pub warnings: Vec<String>,
    /// The repository searched (labels in global mode).
    pub repo_owner: String,
    pub repo_name: String,
    pub profile: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debug: Option<SearchDebug>,
}

fn nullable_reason_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": ["string", "null"], "enum": ["CONTEXT_NOT_FOUND", "INDEX_NOT_READY", null] })
}

fn nullable_string_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": ["string", "null"] })
}
