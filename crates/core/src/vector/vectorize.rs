//! The Cloudflare Vectorize mapping: how edgerag's namespaces, ids, metadata, filters and queries
//! become Vectorize calls, and how its answers come back. The worker's adapter only converts these
//! plain structures to JS objects and calls the binding.
//!
//! Decisions (Vectorize limits: ids ≤ 64 bytes, namespace names ≤ 64 bytes, metadata ≤ 10 KiB,
//! topK ≤ 100 or ≤ 20 with all metadata, string metadata indexed on its first 64 bytes, filters
//! with `$eq $ne $in $nin $lt $lte $gt $gte` only, and implicit AND between fields):
//!
//! - **Namespaces**: one Vectorize namespace per edgerag namespace; names over 64 bytes become
//!   `h:` + 62 hex chars of their BLAKE3 ([`namespace_name`]).
//! - **Ids**: Vectorize ids are unique across the *whole index*, and `getByIds` / `deleteByIds` take
//!   no namespace. The same chunk id can exist in two namespaces (a fork indexed beside its
//!   upstream), so the stored id is BLAKE3(namespace ‖ 0 ‖ chunk id) in hex (exactly 64 bytes,
//!   [`vector_id`]) and the chunk id travels in metadata (`chunkId`).
//! - **Path prefix**: Vectorize has no prefix operator, but ranges work on strings, so a prefix is
//!   `path >= p AND path < p + U+10FFFF` on the indexed `path` field. Only the first 64 bytes of a
//!   path are indexed, so a longer prefix is cut to 64 bytes for the server and the rest is checked
//!   here after fetching ([`QueryPlan::post_filter`]). We chose this over storing directory tokens
//!   (one metadata index per depth, of only 10 allowed) because it is exact at any depth.
//! - **Tags**: Vectorize cannot match one element of a list, so the tag filter is applied here
//!   after fetching the 100 best candidates that pass the other filters (documented recall limit:
//!   a tag rarer than that in the namespace can miss matches).
//! - **Metadata**: stored whole (plain JSON object, never a JS `Map`); results come with full
//!   metadata through `returnMetadata: "all"` when topK ≤ 20 and no post-filter is needed,
//!   otherwise through `getByIds` on the ids the query returned.
//!
//! Metadata indexes to create before inserting (see `wrangler.toml`):
//! `wrangler vectorize create-metadata-index <index> --property-name=path --type=string` and the same
//! for `language`.
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{VectorFilter, VectorMetadata, VectorQuery, VectorRecord, MAX_TOP_K};

/// Vectorize's limit on vectors per `upsert` call.
pub const MAX_UPSERT_PER_CALL: usize = 1000;
/// Largest topK with `returnMetadata: "all"` or `returnValues: true`.
pub const MAX_TOP_K_WITH_METADATA: usize = 20;
/// Ids per `getByIds` / `deleteByIds` call (kept at the documented safe size).
pub const MAX_IDS_PER_CALL: usize = 20;
/// Vectorize indexes the first 64 bytes of a string metadata value.
pub const INDEXED_STRING_BYTES: usize = 64;
/// Filter JSON must stay under 2048 bytes.
pub const MAX_FILTER_BYTES: usize = 2047;
const MAX_NAME_BYTES: usize = 64;

/// The Vectorize namespace of an edgerag namespace.
pub fn namespace_name(namespace: &str) -> String {
    if namespace.len() <= MAX_NAME_BYTES {
        namespace.to_string()
    } else {
        format!("h:{}", &blake3::hash(namespace.as_bytes()).to_hex()[..MAX_NAME_BYTES - 2])
    }
}

/// The Vectorize id of a chunk id in a namespace (64 hex chars).
pub fn vector_id(namespace: &str, id: &str) -> String {
    let mut h = blake3::Hasher::new();
    h.update(namespace.as_bytes());
    h.update(&[0]);
    h.update(id.as_bytes());
    h.finalize().to_hex().to_string()
}

/// Metadata as stored in Vectorize: the chunk id plus [`VectorMetadata`] flattened (camelCase).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredMetadata {
    pub chunk_id: String,
    #[serde(flatten)]
    pub metadata: VectorMetadata,
}

/// A vector as `upsert` takes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UpsertVector {
    pub id: String,
    pub values: Vec<f32>,
    pub namespace: String,
    pub metadata: StoredMetadata,
}

pub fn upsert_vector(namespace: &str, record: &VectorRecord) -> UpsertVector {
    UpsertVector {
        id: vector_id(namespace, &record.id),
        values: record.values.clone(),
        namespace: namespace_name(namespace),
        metadata: StoredMetadata { chunk_id: record.id.clone(), metadata: record.metadata.clone() },
    }
}

/// `returnMetadata` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ReturnMetadata {
    None,
    All,
}

/// The options object of `query(vector, options)`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueryOptions {
    pub top_k: usize,
    pub namespace: String,
    pub return_values: bool,
    pub return_metadata: ReturnMetadata,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filter: Option<Value>,
}

/// How one edgerag query runs against Vectorize.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryPlan {
    pub options: QueryOptions,
    /// Conditions the server cannot check exactly; applied to fetched metadata.
    pub post_filter: Option<VectorFilter>,
    /// Metadata must be fetched with `getByIds` (the query returns none).
    pub fetch_metadata: bool,
    /// How many matches the caller wants.
    pub top_k: usize,
}

/// Plans a (validated) query.
pub fn plan_query(namespace: &str, query: &VectorQuery) -> QueryPlan {
    let (filter, post) = translate_filter(&query.filter);
    // Globs are not applied here (`applies_path_globs` is false): the caller checks them.
    let post_filter = post.then(|| VectorFilter { path_globs: Vec::new(), ..query.filter.clone() });
    let top_k = query.top_k.min(MAX_TOP_K);
    // Post-filtering throws candidates away: fetch as many as Vectorize allows.
    let fetch_k = if post_filter.is_some() { MAX_TOP_K } else { top_k };
    let inline = fetch_k <= MAX_TOP_K_WITH_METADATA;
    QueryPlan {
        options: QueryOptions {
            top_k: fetch_k,
            namespace: namespace_name(namespace),
            return_values: false,
            return_metadata: if inline { ReturnMetadata::All } else { ReturnMetadata::None },
            filter,
        },
        post_filter,
        fetch_metadata: !inline,
        top_k,
    }
}

/// The server-side filter, and whether the result must also be checked here.
pub fn translate_filter(filter: &VectorFilter) -> (Option<Value>, bool) {
    let mut obj = serde_json::Map::new();
    let mut post = filter.tag.is_some();
    if !filter.languages.is_empty() {
        obj.insert("language".into(), json!({ "$in": filter.languages }));
    }
    if let Some(prefix) = filter.path_prefix.as_deref() {
        let cut = cut_to_bytes(prefix, INDEXED_STRING_BYTES - 4);
        if cut.len() < prefix.len() {
            post = true;
        }
        if !cut.is_empty() {
            obj.insert("path".into(), json!({ "$gte": cut, "$lt": format!("{cut}\u{10FFFF}") }));
        }
    }
    if obj.is_empty() {
        return (None, post);
    }
    let value = Value::Object(obj);
    if value.to_string().len() > MAX_FILTER_BYTES {
        // Too many languages for one filter: filter everything here instead.
        return (None, true);
    }
    (Some(value), post)
}

/// The longest prefix of `s` within `max` bytes, on a char boundary (leaves room under the 64
/// indexed bytes for the 4-byte U+10FFFF upper bound).
fn cut_to_bytes(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// One entry of `query(...).matches`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RawMatch {
    pub id: String,
    pub score: f32,
    #[serde(default)]
    pub metadata: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RawMatches {
    pub matches: Vec<RawMatch>,
}

/// One entry of `getByIds(...)`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RawVector {
    pub id: String,
    #[serde(default)]
    pub values: Vec<f32>,
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default)]
    pub metadata: Option<Value>,
}

/// Reads stored metadata back; `None` for vectors not written by edgerag.
pub fn parse_metadata(value: Option<&Value>) -> Option<StoredMetadata> {
    value.and_then(|v| serde_json::from_value(v.clone()).ok())
}

/// Turns a `getByIds` answer into records of `namespace`, in the order of `chunk_ids`.
pub fn records_from_vectors(
    namespace: &str,
    chunk_ids: &[String],
    vectors: Vec<RawVector>,
) -> Vec<VectorRecord> {
    let wanted_ns = namespace_name(namespace);
    let mut by_vid: std::collections::HashMap<String, RawVector> = vectors
        .into_iter()
        .filter(|v| v.namespace.as_deref().is_none_or(|n| n == wanted_ns))
        .map(|v| (v.id.clone(), v))
        .collect();
    let mut seen = std::collections::HashSet::new();
    chunk_ids
        .iter()
        .filter(|id| seen.insert(id.as_str()))
        .filter_map(|id| {
            let v = by_vid.remove(&vector_id(namespace, id))?;
            let stored = parse_metadata(v.metadata.as_ref())?;
            (stored.chunk_id == *id).then_some(VectorRecord {
                id: id.clone(),
                values: v.values,
                metadata: stored.metadata,
            })
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::vector::VectorMetadata;

    fn meta() -> VectorMetadata {
        VectorMetadata {
            path: "src/lib.rs".into(),
            language: "rust".into(),
            chunk_type: "code-function".into(),
            symbol: Some("main".into()),
            start_line: 1,
            end_line: 4,
            chunk_hash: "abc".into(),
            tags: vec!["api".into()],
        }
    }

    #[test]
    fn names_and_ids_fit_limits() {
        assert_eq!(namespace_name("repo:a/b"), "repo:a/b");
        let long = format!("repo:{}/{}", "o".repeat(40), "n".repeat(40));
        let n = namespace_name(&long);
        assert_eq!(n.len(), 64);
        assert!(n.starts_with("h:"));
        assert_eq!(n, namespace_name(&long));
        let id = vector_id("repo:a/b", &"f".repeat(64));
        assert_eq!(id.len(), 64);
        assert_ne!(
            id,
            vector_id("repo:a/c", &"f".repeat(64)),
            "same chunk id in two namespaces must not collide"
        );
    }

    #[test]
    fn upsert_shape_is_plain_json() {
        let rec = VectorRecord { id: "c1".into(), values: vec![0.5, 0.25], metadata: meta() };
        let v = serde_json::to_value(upsert_vector("repo:a/b", &rec)).unwrap();
        assert_eq!(v["namespace"], "repo:a/b");
        assert_eq!(v["id"], vector_id("repo:a/b", "c1"));
        assert_eq!(v["values"], json!([0.5, 0.25]));
        assert_eq!(
            v["metadata"],
            json!({"chunkId": "c1", "path": "src/lib.rs", "language": "rust", "type": "code-function",
                   "symbol": "main", "startLine": 1, "endLine": 4, "chunkHash": "abc", "tags": ["api"]})
        );
        let back = parse_metadata(Some(&v["metadata"])).unwrap();
        assert_eq!(back.metadata, meta());
    }

    #[test]
    fn filters_translate() {
        let f = VectorFilter {
            languages: vec!["rust".into(), "go".into()],
            path_prefix: Some("src/".into()),
            tag: None,
            // Not expressible in Vectorize's metadata filter: left to the caller.
            path_globs: vec!["src/**/*.rs".into()],
        };
        let (v, post) = translate_filter(&f);
        assert!(!post);
        assert_eq!(
            v.unwrap(),
            json!({"language": {"$in": ["rust", "go"]}, "path": {"$gte": "src/", "$lt": "src/\u{10FFFF}"}})
        );
        let (v, post) =
            translate_filter(&VectorFilter { tag: Some("api".into()), ..VectorFilter::default() });
        assert_eq!((v, post), (None, true));
        let long = "d/".repeat(40);
        let (v, post) =
            translate_filter(&VectorFilter { path_prefix: Some(long.clone()), ..VectorFilter::default() });
        assert!(post, "a prefix over the indexed bytes is re-checked");
        let gte = v.unwrap()["path"]["$gte"].as_str().unwrap().to_string();
        assert!(gte.len() <= 60 && long.starts_with(&gte));
        let many = VectorFilter {
            languages: (0..300).map(|i| format!("lang{i}")).collect(),
            ..VectorFilter::default()
        };
        assert_eq!(translate_filter(&many), (None, true));
        assert_eq!(translate_filter(&VectorFilter::default()), (None, false));
    }

    #[test]
    fn query_plans_respect_top_k_limits() {
        let q = |k: usize, filter: VectorFilter| VectorQuery { vector: vec![1.0], top_k: k, filter };
        let p = plan_query("repo:a/b", &q(10, VectorFilter::default()));
        assert_eq!(
            (p.options.top_k, p.options.return_metadata, p.fetch_metadata),
            (10, ReturnMetadata::All, false)
        );
        let p = plan_query("repo:a/b", &q(50, VectorFilter::default()));
        assert_eq!(
            (p.options.top_k, p.options.return_metadata, p.fetch_metadata),
            (50, ReturnMetadata::None, true)
        );
        let p =
            plan_query("repo:a/b", &q(5, VectorFilter { tag: Some("t".into()), ..VectorFilter::default() }));
        assert_eq!(p.options.top_k, 100);
        assert!(p.fetch_metadata && p.post_filter.is_some());
        let globbed = VectorFilter {
            tag: Some("t".into()),
            path_globs: vec!["*.rs".into()],
            ..VectorFilter::default()
        };
        let p = plan_query("repo:a/b", &q(5, globbed));
        assert_eq!(p.post_filter.map(|f| f.path_globs), Some(vec![]), "globs are left to the caller");
        assert_eq!(p.top_k, 5);
        let json = serde_json::to_value(&p.options).unwrap();
        assert_eq!(
            json,
            json!({"topK": 100, "namespace": "repo:a/b", "returnValues": false, "returnMetadata": "none"})
        );
    }

    #[test]
    fn get_by_ids_answer_maps_back() {
        let ns = "repo:a/b";
        let stored = serde_json::to_value(upsert_vector(
            ns,
            &VectorRecord { id: "c1".into(), values: vec![1.0], metadata: meta() },
        ))
        .unwrap();
        let raw: Vec<RawVector> = serde_json::from_value(json!([
            {"id": vector_id(ns, "c1"), "values": [1.0], "namespace": ns, "metadata": stored["metadata"]},
            {"id": "foreign", "values": [0.0], "metadata": {"x": 1}}
        ]))
        .unwrap();
        let recs = records_from_vectors(ns, &["zz".into(), "c1".into(), "c1".into()], raw);
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].id, "c1");
        assert_eq!(recs[0].metadata, meta());
        let m: RawMatches =
            serde_json::from_value(json!({"count": 1, "matches": [{"id": "x", "score": 0.5}]})).unwrap();
        assert_eq!(m.matches[0].metadata, None);
    }
}
