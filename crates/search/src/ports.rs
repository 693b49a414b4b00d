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

    /// Several queries at once (a search's sub-queries), answered in order, each exactly as
    /// [`search`](Self::search) answers it alone. The default runs them concurrently; an index can
    /// share work between them: one round trip, one ranking for lists that differ only by phrases
    /// it holds no row of ([`crate::query::mergeable_phrases`]), one scoring pass for a list and
    /// those that extend it ([`crate::query::shared_scoring`]).
    async fn search_many(&self, queries: &[KeywordQuery]) -> Vec<Result<Vec<ScoredKey>, PortError>> {
        futures_util::future::join_all(queries.iter().map(|q| self.search(q))).await
    }
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

/// A matched chunk asked about in the code graph: the lines it spans and the node it belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SymbolQuery {
    pub namespace: String,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    /// The chunk's `symbolId` (its graph node).
    pub symbol_id: Option<String>,
}

/// Which way a [`SymbolLink`] points from the queried chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LinkDirection {
    /// The chunk calls it (a callee, located at its definition's first line).
    Uses,
    /// It calls the chunk's symbol or a symbol defined in the chunk (a caller, located at the
    /// call site).
    UsedBy,
}

/// One resolved `CALLS` edge at depth 1 of a queried chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct SymbolLink {
    /// Index of the [`SymbolQuery`] it answers.
    pub query: usize,
    pub direction: LinkDirection,
    /// The other symbol's name.
    pub name: String,
    /// Where to read it: the callee's definition, or the caller's call site (first one).
    pub path: String,
    pub line: u32,
    /// The edge's confidence (the best one when several edges link the same pair).
    pub confidence: f32,
}

/// The answer of [`ChunkStore::graph_links`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GraphLinks {
    /// The asked namespaces that have a code graph.
    pub with_graph: Vec<String>,
    /// Per query and direction: best first by [`link_order`], at most `per_query`.
    pub links: Vec<SymbolLink>,
}

/// The order links are ranked in: higher confidence first, then proximity to the queried chunk
/// (same file first, then nearer lines), then name and path for determinism.
pub fn link_order(q: &SymbolQuery, a: &SymbolLink, b: &SymbolLink) -> std::cmp::Ordering {
    let near = |l: &SymbolLink| (l.path != q.path, l.line.abs_diff(q.start_line));
    b.confidence
        .total_cmp(&a.confidence)
        .then_with(|| near(a).cmp(&near(b)))
        .then_with(|| a.name.cmp(&b.name))
        .then_with(|| a.path.cmp(&b.path))
}

/// A line of a file; [`ChunkStore::chunks_at`] finds the chunks that hold it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LinePoint {
    pub namespace: String,
    pub path: String,
    pub line: u32,
}

/// A prose parent (a document chunked into parents and children) and all its children. The
/// children's `id` is the id of their searchable chunk, so a search hit maps to its child.
#[derive(Debug, Clone, PartialEq)]
pub struct ProseFamily {
    pub namespace: String,
    pub path: String,
    pub parent: edgerag_core::chunk::parent_child::ParentChunk,
    pub children: Vec<edgerag_core::chunk::parent_child::ChildChunk>,
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
    /// Which of `namespaces` have a code graph, and the callees and callers of each query at
    /// depth 1 (resolved `CALLS` edges only): callees are the calls made on the query's lines,
    /// callers the calls into its `symbol_id` or into a symbol defined on its lines (calls from
    /// its own lines excluded). One link per other symbol and direction, at most `per_query` per
    /// query and direction. A store without a graph answers nothing (so callers fall back).
    async fn graph_links(
        &self,
        namespaces: &[String],
        queries: &[SymbolQuery],
        per_query: usize,
    ) -> Result<GraphLinks, PortError> {
        let _ = (namespaces, queries, per_query);
        Ok(GraphLinks::default())
    }
    /// Every chunk holding any of the lines, in (namespace, path, chunk_index) order.
    async fn chunks_at(&self, points: &[LinePoint]) -> Result<Vec<ChunkRecord>, PortError> {
        let _ = points;
        Ok(Vec::new())
    }
    /// The prose families (parent + every child) of those `children` that are children of a
    /// parent/child document; other keys are skipped. A store without such documents has none.
    async fn prose_families(&self, _children: &[ChunkKey]) -> Result<Vec<ProseFamily>, PortError> {
        Ok(Vec::new())
    }
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
