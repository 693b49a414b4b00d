//! The vector index port and everything about vector search that needs no I/O.
//!
//! Implementations of [`VectorIndex`]: Vectorize and the exact D1-backed local index live in the
//! worker (they need `worker::Env`); [`InMemoryVectorIndex`] serves native tests. All of them run
//! one behavioural suite (`testing::run_suite`, behind the `testing` feature) and share the semantics written down here:
//!
//! - **Scores** are cosine similarity; results are ordered by score descending, ties by id
//!   ascending ([`topk`]), so every implementation returns the same list for the same data.
//! - **topK** must be in `1..=100` (Vectorize's limit); anything else is [`VectorError::Invalid`]
//!   — rejected, not clamped, so a caller never silently gets fewer results than it asked for.
//! - **Filters** ([`VectorFilter`]) are applied before topK: any of the languages, a path prefix
//!   (plain string prefix), a tag (exact member of `tags`); all given conditions must hold.
//! - **Validation** ([`validate_records`]) rejects a whole upsert batch before anything is written:
//!   wrong dimension, empty or > 64-byte ids or ids with control characters, non-finite values, metadata over 10 KiB, tags that are
//!   empty or contain a comma. Upserting an existing id replaces it; the last duplicate in a batch
//!   wins. Deleting or getting an unknown id is not an error.
use serde::{Deserialize, Serialize};

use crate::chunk::Chunk;
use crate::path_glob::PathGlobs;

pub mod cache;
pub mod codec;
mod memory;
pub mod quantized;
#[doc(hidden)]
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod topk;
pub mod vectorize;

pub use memory::InMemoryVectorIndex;
pub use topk::{cosine, TopK};

/// Largest topK a query may ask for (Vectorize's limit).
pub const MAX_TOP_K: usize = 100;
/// Longest vector id in bytes (Vectorize's limit; chunk ids are 64 hex chars).
pub const MAX_ID_BYTES: usize = 64;
/// Largest metadata per vector, as JSON (Vectorize's limit).
pub const MAX_METADATA_BYTES: usize = 10 * 1024;
/// Most languages in one filter.
pub const MAX_FILTER_LANGUAGES: usize = 64;
/// Largest dimension Vectorize accepts.
pub const MAX_DIMS: usize = 1536;

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

impl VectorMetadata {
    /// What a vector of `chunk` carries, with the tags of its file. Every writer (the worker's
    /// ingestion, the in-memory stores) stores exactly this, so filters see the same fields
    /// everywhere.
    pub fn of_chunk(chunk: &Chunk, tags: &[String]) -> VectorMetadata {
        VectorMetadata {
            path: chunk.path.clone(),
            language: chunk.language.as_str().into(),
            chunk_type: chunk.chunk_type.as_str().into(),
            symbol: chunk.metadata.symbol_name.clone(),
            start_line: chunk.start_line,
            end_line: chunk.end_line,
            chunk_hash: chunk.text_hash.clone(),
            tags: tags.to_vec(),
        }
    }
}

impl VectorRecord {
    /// The record stored for `chunk` (id = chunk id).
    pub fn of_chunk(chunk: &Chunk, values: Vec<f32>, tags: &[String]) -> VectorRecord {
        VectorRecord { id: chunk.id.clone(), values, metadata: VectorMetadata::of_chunk(chunk, tags) }
    }
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
    /// Any of these path globs ([`crate::path_glob`]). Only indexes whose
    /// [`VectorIndex::applies_path_globs`] says so apply them; the others filter by
    /// [`Self::path_prefix`] alone and leave the globs to the caller.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path_globs: Vec<String>,
}

impl VectorFilter {
    pub fn is_empty(&self) -> bool {
        self.languages.is_empty()
            && self.path_prefix.is_none()
            && self.tag.is_none()
            && self.path_globs.is_empty()
    }

    /// The globs, compiled once for many checks ([`Self::matches_with`]).
    pub fn globs(&self) -> PathGlobs {
        PathGlobs::new(&self.path_globs)
    }

    /// The reference semantics every implementation that applies path globs must reproduce.
    pub fn matches(&self, m: &VectorMetadata) -> bool {
        self.matches_with(&self.globs(), m)
    }

    /// [`Self::matches`] with the globs compiled by [`Self::globs`].
    pub fn matches_with(&self, globs: &PathGlobs, m: &VectorMetadata) -> bool {
        (self.languages.is_empty() || self.languages.contains(&m.language))
            && self.path_prefix.as_deref().is_none_or(|p| m.path.starts_with(p))
            && self.tag.as_deref().is_none_or(|t| m.tags.iter().any(|x| x == t))
            && globs.is_match(&m.path)
    }
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

/// Serializes as `{ "code": "VECTOR_…", "message": "…" }`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VectorError {
    #[error("vector has {got} dimensions, the index expects {expected}")]
    DimensionMismatch { expected: usize, got: usize },
    #[error("invalid vector request: {0}")]
    Invalid(String),
    #[error("vector backend failed: {0}")]
    Backend(String),
}

impl VectorError {
    pub fn code(&self) -> &'static str {
        match self {
            VectorError::DimensionMismatch { .. } => "VECTOR_DIMENSION_MISMATCH",
            VectorError::Invalid(_) => "VECTOR_INVALID",
            VectorError::Backend(_) => "VECTOR_BACKEND",
        }
    }

    /// Backend failures are worth retrying; invalid requests are not.
    pub fn is_retryable(&self) -> bool {
        matches!(self, VectorError::Backend(_))
    }
}

impl Serialize for VectorError {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("code", self.code())?;
        map.serialize_entry("message", &self.to_string())?;
        map.end()
    }
}

/// A namespaced nearest-neighbour index. Namespaces never see each other's vectors.
#[async_trait::async_trait(?Send)]
pub trait VectorIndex {
    /// Dimensions of the vectors this index holds.
    fn dims(&self) -> usize;
    /// `in-memory`, `local-d1`, `vectorize`: for `/health` and logs.
    fn kind(&self) -> &'static str {
        "unknown"
    }
    /// Whether queries apply [`VectorFilter::path_globs`] before ranking (top K counts only the
    /// vectors whose paths match). When not, they filter by the globs' prefix alone: the caller
    /// checks the globs itself and should ask for more.
    fn applies_path_globs(&self) -> bool {
        false
    }
    /// Insert or replace by id.
    async fn upsert(&self, namespace: &str, records: &[VectorRecord]) -> Result<(), VectorError>;
    /// Best `top_k` matches by cosine similarity, ties broken by id ascending.
    async fn query(&self, namespace: &str, query: &VectorQuery) -> Result<Vec<VectorMatch>, VectorError>;
    /// Each of `queries` answered as [`VectorIndex::query`] answers it, in order. The default runs
    /// them concurrently; an index that can answer several queries in one pass over its vectors
    /// (and one round trip) overrides it.
    async fn query_many(
        &self,
        namespace: &str,
        queries: &[VectorQuery],
    ) -> Vec<Result<Vec<VectorMatch>, VectorError>> {
        futures_util::future::join_all(queries.iter().map(|q| self.query(namespace, q))).await
    }
    async fn get_by_ids(&self, namespace: &str, ids: &[String]) -> Result<Vec<VectorRecord>, VectorError>;
    async fn delete_by_ids(&self, namespace: &str, ids: &[String]) -> Result<(), VectorError>;
}

#[async_trait::async_trait(?Send)]
impl<I: VectorIndex + ?Sized> VectorIndex for Box<I> {
    fn dims(&self) -> usize {
        (**self).dims()
    }
    fn kind(&self) -> &'static str {
        (**self).kind()
    }
    fn applies_path_globs(&self) -> bool {
        (**self).applies_path_globs()
    }
    async fn upsert(&self, namespace: &str, records: &[VectorRecord]) -> Result<(), VectorError> {
        (**self).upsert(namespace, records).await
    }
    async fn query(&self, namespace: &str, query: &VectorQuery) -> Result<Vec<VectorMatch>, VectorError> {
        (**self).query(namespace, query).await
    }
    async fn query_many(
        &self,
        namespace: &str,
        queries: &[VectorQuery],
    ) -> Vec<Result<Vec<VectorMatch>, VectorError>> {
        (**self).query_many(namespace, queries).await
    }
    async fn get_by_ids(&self, namespace: &str, ids: &[String]) -> Result<Vec<VectorRecord>, VectorError> {
        (**self).get_by_ids(namespace, ids).await
    }
    async fn delete_by_ids(&self, namespace: &str, ids: &[String]) -> Result<(), VectorError> {
        (**self).delete_by_ids(namespace, ids).await
    }
}

/// Checks a whole upsert batch (see the module docs); nothing may be written when this fails.
pub fn validate_records(namespace: &str, records: &[VectorRecord], dims: usize) -> Result<(), VectorError> {
    validate_namespace(namespace)?;
    for r in records {
        validate_id(&r.id)?;
        if r.values.len() != dims {
            return Err(VectorError::DimensionMismatch { expected: dims, got: r.values.len() });
        }
        if r.values.iter().any(|x| !x.is_finite()) {
            return Err(VectorError::Invalid(format!("vector {} has a non-finite value", r.id)));
        }
        for t in &r.metadata.tags {
            if t.is_empty() || t.contains(',') {
                return Err(VectorError::Invalid(format!(
                    "tag {t:?} of {} is empty or contains a comma",
                    r.id
                )));
            }
        }
        let size = serde_json::to_vec(&r.metadata).map(|v| v.len()).unwrap_or(usize::MAX);
        if size > MAX_METADATA_BYTES {
            return Err(VectorError::Invalid(format!(
                "metadata of {} is {size} bytes, over the {MAX_METADATA_BYTES}-byte limit",
                r.id
            )));
        }
    }
    Ok(())
}

/// Checks a query: dimension, finite values, topK in `1..=100`.
pub fn validate_query(namespace: &str, query: &VectorQuery, dims: usize) -> Result<(), VectorError> {
    validate_namespace(namespace)?;
    if query.vector.len() != dims {
        return Err(VectorError::DimensionMismatch { expected: dims, got: query.vector.len() });
    }
    if query.vector.iter().any(|x| !x.is_finite()) {
        return Err(VectorError::Invalid("query vector has a non-finite value".into()));
    }
    if query.filter.languages.len() > MAX_FILTER_LANGUAGES {
        return Err(VectorError::Invalid(format!("at most {MAX_FILTER_LANGUAGES} languages per filter")));
    }
    if query.filter.tag.as_deref().is_some_and(|t| t.is_empty() || t.contains(',')) {
        return Err(VectorError::Invalid("a tag filter must be non-empty and contain no comma".into()));
    }
    if query.top_k == 0 || query.top_k > MAX_TOP_K {
        return Err(VectorError::Invalid(format!(
            "topK must be between 1 and {MAX_TOP_K}, not {}",
            query.top_k
        )));
    }
    Ok(())
}

pub fn validate_id(id: &str) -> Result<(), VectorError> {
    if id.chars().any(char::is_control) {
        return Err(VectorError::Invalid(format!("vector id {id:?} contains a control character")));
    }
    if id.is_empty() || id.len() > MAX_ID_BYTES {
        return Err(VectorError::Invalid(format!(
            "vector id must be 1..={MAX_ID_BYTES} bytes, got {} bytes",
            id.len()
        )));
    }
    Ok(())
}

pub fn validate_namespace(namespace: &str) -> Result<(), VectorError> {
    if namespace.is_empty() {
        return Err(VectorError::Invalid("namespace is empty".into()));
    }
    Ok(())
}

/// Keeps the last record of each id (an upsert batch with duplicates behaves like sequential
/// upserts), in first-seen order.
pub fn dedup_last_wins(records: &[VectorRecord]) -> Vec<&VectorRecord> {
    let mut last: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, r) in records.iter().enumerate() {
        last.insert(&r.id, i);
    }
    records.iter().enumerate().filter(|(i, r)| last.get(r.id.as_str()) == Some(i)).map(|(_, r)| r).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_vector_carries_its_place_symbol_hash_and_the_file_tags() {
        let text = "fn retry() {}\n";
        let chunk = crate::chunk_text("src/net.rs", text, &Default::default()).remove(0);
        let tags = vec!["api".to_string(), "v2".to_string()];
        let record = VectorRecord::of_chunk(&chunk, vec![1.0, 0.0], &tags);
        assert_eq!(record.id, chunk.id);
        let m = &record.metadata;
        assert_eq!((m.path.as_str(), m.language.as_str()), ("src/net.rs", "rust"));
        assert_eq!((m.chunk_type.as_str(), m.symbol.as_deref()), ("code-function", Some("retry")));
        assert_eq!((m.start_line, m.end_line), (chunk.start_line, chunk.end_line));
        assert_eq!(m.chunk_hash, chunk.text_hash);
        assert_eq!(m.tags, tags);
        assert!(VectorFilter { tag: Some("v2".into()), ..Default::default() }.matches(m));
    }

    fn meta(path: &str, lang: &str, tags: &[&str]) -> VectorMetadata {
        VectorMetadata {
            path: path.into(),
            language: lang.into(),
            chunk_type: "code-function".into(),
            symbol: None,
            start_line: 1,
            end_line: 2,
            chunk_hash: "h".into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
        }
    }

    #[test]
    fn filter_semantics() {
        let m = meta("src/a.rs", "rust", &["api"]);
        assert!(VectorFilter::default().matches(&m));
        let f = |l: &[&str], p: Option<&str>, t: Option<&str>| VectorFilter {
            languages: l.iter().map(|s| s.to_string()).collect(),
            path_prefix: p.map(str::to_string),
            tag: t.map(str::to_string),
            path_globs: Vec::new(),
        };
        assert!(f(&["go", "rust"], None, None).matches(&m));
        assert!(!f(&["go"], None, None).matches(&m));
        assert!(f(&[], Some("src/"), None).matches(&m));
        assert!(!f(&[], Some("lib/"), None).matches(&m));
        assert!(f(&[], None, Some("api")).matches(&m));
        assert!(!f(&[], None, Some("ap")).matches(&m));
        assert!(!f(&["rust"], Some("src/"), Some("web")).matches(&m));
        let g = |globs: &[&str]| VectorFilter {
            path_globs: globs.iter().map(|s| s.to_string()).collect(),
            ..VectorFilter::default()
        };
        assert!(g(&["*.rs"]).matches(&m) && g(&["*.py", "src/**"]).matches(&m));
        assert!(!g(&["*.py"]).matches(&m) && !g(&["lib/**"]).matches(&m));
        assert!(!g(&["*.rs"]).is_empty());
    }

    #[test]
    fn error_json() {
        let v = serde_json::to_value(VectorError::DimensionMismatch { expected: 3, got: 2 }).unwrap();
        assert_eq!(v["code"], "VECTOR_DIMENSION_MISMATCH");
        assert_eq!(serde_json::to_value(VectorError::Invalid("x".into())).unwrap()["code"], "VECTOR_INVALID");
    }

    #[test]
    fn dedup_keeps_last() {
        let r =
            |id: &str, v: f32| VectorRecord { id: id.into(), values: vec![v], metadata: meta("p", "l", &[]) };
        let recs = [r("a", 1.0), r("b", 2.0), r("a", 3.0)];
        let d = dedup_last_wins(&recs);
        assert_eq!(
            d.iter().map(|r| (r.id.as_str(), r.values[0])).collect::<Vec<_>>(),
            [("b", 2.0), ("a", 3.0)]
        );
    }
}
