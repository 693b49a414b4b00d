//! The ports the pipeline reads through. The worker implements them over D1 (FTS5, `chunks`,
//! `namespaces`), Workers AI and OpenAI-compatible HTTP; [`crate::memory`] implements the stores
//! in memory for native tests and the retrieval benchmark. Vector search uses the core's
//! [`edgerag_core::embed::Embedder`] and [`edgerag_core::vector::VectorIndex`] ports.
//!
//! Every trait is `?Send` because JS futures in the worker are not `Send`.
use edgerag_core::Chunk;
use serde::{Deserialize, Serialize};

use crate::error::PortError;
use crate::filters::SearchFilters;
use crate::query::QueryTerm;

/// A stored chunk as the pipeline sees it: the core chunk plus where it lives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChunkRecord {
    /// `repo:<owner>/<name>`.
    pub namespace: String,
    pub chunk: Chunk,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

/// A chunk identity across namespaces.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ChunkKey {
    pub namespace: String,
    pub id: String,
}

impl ChunkKey {
    pub fn new(namespace: impl Into<String>, id: impl Into<String>) -> Self {
        ChunkKey { namespace: namespace.into(), id: id.into() }
    }
}

/// One retriever hit: higher `score` is better (BM25 is reported positive).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoredKey {
    pub key: ChunkKey,
    pub score: f32,
}

/// A BM25 query: the terms come from [`crate::query::keyword_terms`], so every implementation
/// (D1 FTS5 and in-memory) searches the same thing.
#[derive(Debug, Clone, PartialEq)]
pub struct KeywordQuery {
    pub namespaces: Vec<String>,
    pub terms: Vec<QueryTerm>,
    pub filters: SearchFilters,
    pub limit: usize,
}

/// Full-text search over chunks (BM25, any-term semantics, identifier-aware documents from
/// [`edgerag_core::text::fts_document`]).
#[async_trait::async_trait(?Send)]
pub trait KeywordIndex {
    /// Best `limit` chunks of the given namespaces that match any term and the filters, best
    /// first; ties by chunk id ascending. Empty terms → empty result.
    async fn search(&self, query: &KeywordQuery) -> Result<Vec<ScoredKey>, PortError>;
}

/// Lines of a file to read around a hit: chunk indexes `from..=to` of `path`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NeighborRange {
    pub namespace: String,
    pub path: String,
    pub from_index: u32,
    pub to_index: u32,
}

/// The chunks of one enclosing definition: those whose `parent_symbol` is `symbol` or whose own
/// `symbol_name` is `symbol`, in `path`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SymbolFamily {
    pub namespace: String,
    pub path: String,
    pub symbol: String,
}

/// Chunk lookups by id, by position and by symbol (batched: one store round trip per call).
#[async_trait::async_trait(?Send)]
pub trait ChunkStore {
    /// The chunks for the keys that exist (missing ones are skipped), in any order.
    async fn get(&self, keys: &[ChunkKey]) -> Result<Vec<ChunkRecord>, PortError>;
    /// Every chunk inside any of the ranges, in (namespace, path, chunk_index) order.
    async fn neighbors(&self, ranges: &[NeighborRange]) -> Result<Vec<ChunkRecord>, PortError>;
    /// Every chunk of any of the families, in (namespace, path, chunk_index) order; at most
    /// `limit` per family.
    async fn families(&self, families: &[SymbolFamily], limit: usize) -> Result<Vec<ChunkRecord>, PortError>;
}

/// Lifecycle of a namespace (the `namespaces.status` column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum NamespaceStatus {
    Empty,
    Indexing,
    Ready,
    Failed,
}

impl NamespaceStatus {
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_uppercase().as_str() {
            "EMPTY" => Some(Self::Empty),
            "INDEXING" => Some(Self::Indexing),
            "READY" => Some(Self::Ready),
            "FAILED" => Some(Self::Failed),
            _ => None,
        }
    }

    /// The stored form (`namespaces.status`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Empty => "EMPTY",
            Self::Indexing => "INDEXING",
            Self::Ready => "READY",
            Self::Failed => "FAILED",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NamespaceInfo {
    pub owner: String,
    pub name: String,
    pub status: NamespaceStatus,
    /// Last time it became READY (ISO-8601, sortable); `None` if it never was.
    pub ready_at: Option<String>,
    pub chunk_count: u64,
}

impl NamespaceInfo {
    /// `repo:<owner>/<name>`.
    pub fn id(&self) -> String {
        namespace_id(&self.owner, &self.name)
    }

    /// READY now, or READY before and being re-indexed (its previous chunks are still there).
    pub fn is_searchable(&self) -> bool {
        self.status == NamespaceStatus::Ready || self.ready_at.is_some()
    }
}

/// `repo:<owner>/<name>`.
pub fn namespace_id(owner: &str, name: &str) -> String {
    format!("repo:{owner}/{name}")
}

/// Which namespaces exist and which became READY last.
#[async_trait::async_trait(?Send)]
pub trait NamespaceCatalog {
    async fn list(&self) -> Result<Vec<NamespaceInfo>, PortError>;
}

/// One chat-completion style request to a text model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GenerateRequest {
    pub system: String,
    pub prompt: String,
    pub max_tokens: u32,
    pub temperature: f32,
}

/// A text model for the query transformers and LLM multi-query (Workers AI text model or an
/// OpenAI-compatible chat endpoint). Optional: without one those modules are skipped.
#[async_trait::async_trait(?Send)]
pub trait Generator {
    /// e.g. `workers-ai:@cf/meta/llama-3.1-8b-instruct`.
    fn name(&self) -> String;
    async fn generate(&self, request: &GenerateRequest) -> Result<String, PortError>;
}

/// A cross-encoder (e.g. `@cf/baai/bge-reranker-base`). Optional.
#[async_trait::async_trait(?Send)]
pub trait Reranker {
    fn name(&self) -> String;
    /// One relevance score per document, in order (higher is better; any scale).
    async fn rerank(&self, query: &str, documents: &[String]) -> Result<Vec<f32>, PortError>;
}

/// Milliseconds from some fixed origin; for per-module timings. (In workerd the clock only
/// advances across I/O, so pure CPU modules read as ~0 there: that is the platform, not a bug.)
pub trait Clock {
    fn now_ms(&self) -> f64;
}

/// A clock that never advances (tests, or when timings are not wanted).
pub struct NoClock;

impl Clock for NoClock {
    fn now_ms(&self) -> f64 {
        0.0
    }
}

/// Where structured events go (`rag_parameter_guard`, fallbacks). The worker prints JSON lines.
pub trait EventSink {
    fn event(&self, name: &str, fields: serde_json::Value);
}

/// Discards events.
pub struct NoEvents;

impl EventSink for NoEvents {
    fn event(&self, _name: &str, _fields: serde_json::Value) {}
}
