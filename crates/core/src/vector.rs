//! The vector index port. Implementations: Vectorize and the exact D1-backed local index (in the
//! worker), and an in-memory index for native tests. All share one behavioural test suite.
use serde::{Deserialize, Serialize};

/// Metadata stored with each vector (kept small: Vectorize allows 10 KiB).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VectorMetadata {
    pub path: String,
    pub language: String,
    #[serde(rename = "type")]
    pub chunk_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    pub start_line: u32,
    pub end_line: u32,
    /// The chunk's `text_hash`.
    pub chunk_hash: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorRecord {
    /// The chunk id (≤ 64 bytes).
    pub id: String,
    pub values: Vec<f32>,
    pub metadata: VectorMetadata,
}

/// Filters supported by every implementation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VectorFilter {
    /// Any of these languages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub languages: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_prefix: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VectorQuery {
    pub vector: Vec<f32>,
    pub top_k: usize,
    #[serde(default)]
    pub filter: VectorFilter,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorMatch {
    pub id: String,
    /// Cosine similarity.
    pub score: f32,
    pub metadata: VectorMetadata,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize)]
#[serde(tag = "code", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum VectorError {
    #[error("vector has {got} dimensions, the index expects {expected}")]
    DimensionMismatch { expected: usize, got: usize },
    #[error("invalid vector request: {0}")]
    Invalid(String),
    #[error("vector backend failed: {0}")]
    Backend(String),
}

/// A namespaced nearest-neighbour index. Namespaces never see each other's vectors.
#[async_trait::async_trait(?Send)]
pub trait VectorIndex {
    /// Dimensions of the vectors this index holds.
    fn dims(&self) -> usize;
    /// Insert or replace by id.
    async fn upsert(&self, namespace: &str, records: &[VectorRecord]) -> Result<(), VectorError>;
    /// Best `top_k` matches by cosine similarity, ties broken by id ascending.
    async fn query(&self, namespace: &str, query: &VectorQuery) -> Result<Vec<VectorMatch>, VectorError>;
    async fn get_by_ids(&self, namespace: &str, ids: &[String]) -> Result<Vec<VectorRecord>, VectorError>;
    async fn delete_by_ids(&self, namespace: &str, ids: &[String]) -> Result<(), VectorError>;
}
