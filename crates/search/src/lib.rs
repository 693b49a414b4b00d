//! edgerag-search: the read path of edgerag as a pipeline of small pure modules.
//!
//! ```text
//! request JSON ─ sanitize ─ scope ─ profile ─ guard ─▶ ResolvedPlan
//!   ─ transform (LLM, optional) ─ expand (deterministic) ─ sub-queries
//!   ─ retrieve: vector (Embedder + VectorIndex) ∥ BM25 (KeywordIndex) ─ weighted RRF ─ minScore
//!   ─ multi-query merge ─ code-aware ─ heuristic ─ cross-encoder (optional) ─ parent/child
//!   ─ topK ─ neighbours ─ context budget ─▶ response v4
//! ```
//!
//! Every module is a plain function over plain data (unit-tested alone) and records itself in
//! `appliedModules`. Storage and models are reached through the ports in [`ports`]; the worker
//! implements them over D1 / Vectorize / Workers AI, [`memory`] implements the stores in memory.
//! Nothing here performs I/O or knows about `worker::Env`.
//!
//! ```
//! use edgerag_search::memory::{block_on, MemoryCatalog, MemoryStore};
//! use edgerag_search::ports::{NamespaceInfo, NamespaceStatus, NoClock, NoEvents};
//! use edgerag_search::{ProfileRegistry, SearchMode, SearchPipeline, SearchServices};
//!
//! let store = MemoryStore::new();
//! let text = "fn retry_with_backoff(attempts: u32) {}\n";
//! store.upsert("repo:acme/app", edgerag_core::chunk_text("src/net.rs", text, &Default::default()), &[]);
//! let catalog = MemoryCatalog::new(vec![NamespaceInfo {
//!     owner: "acme".into(), name: "app".into(), status: NamespaceStatus::Ready,
//!     ready_at: Some("2025-01-01T00:00:00Z".into()), chunk_count: 1,
//! }]);
//! let services = SearchServices {
//!     keyword: &store, chunks: &store, catalog: &catalog, embedder: None, vectors: None,
//!     generator: None, reranker: None, clock: &NoClock, events: &NoEvents,
//! };
//! let profiles = ProfileRegistry::default();
//! let pipeline = SearchPipeline { services, profiles: &profiles, config_warnings: &[] };
//! let body = serde_json::json!({ "rawQuery": "where do we retry with backoff?" });
//! let response = block_on(pipeline.run(SearchMode::Repo, &body)).unwrap();
//! assert_eq!(response.matches[0].path, "src/net.rs");
//! assert!(response.applied_modules.contains(&"profile:balanced".to_string()));
//! ```

#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod bm25;
pub mod candidate;
pub mod contract;
pub mod error;
pub mod mcp;
pub mod memory;
pub mod model_requests;
pub mod pipeline;
pub mod ports;
pub mod repo_tools;
pub mod stages;
/// The shared behaviour suite of the store ports (the worker's test build runs it over D1).
#[cfg(any(test, feature = "testing"))]
pub mod testing;

// Each stage and each part of the contract is also reachable at the crate root
// (`edgerag_search::sanitize`, `edgerag_search::request`), as before they had folders.
pub use contract::{request, response, schema};
pub use stages::{
    budget, coverage, evidence, expand, filters, fusion, graph_candidates, guard, multi_query, neighbors,
    parent_child, profile, query, rerank, sanitize, spans, transform,
};

#[cfg(test)]
mod testutil;

pub use error::{PortError, SearchError};
pub use guard::ResolvedPlan;
pub use pipeline::{ExecuteInput, Outcome, SearchPipeline, SearchServices};
pub use profile::{Profile, ProfileRegistry};
pub use request::SearchMode;
pub use response::{Match, SearchResponse};
