//! [`VectorIndex`] over Cloudflare Vectorize. All decisions (namespaces, ids, metadata, filters,
//! topK planning) are in [`edgerag_core::vector::vectorize`], tested natively; this file converts
//! to and from JS and calls [`super::vectorize_sys`].
//!
//! Vectorize is eventually consistent: an upsert becomes visible to queries seconds later.
use edgerag_core::vector::vectorize::{
    self as map, plan_query, records_from_vectors, upsert_vector, RawMatches, RawVector, MAX_IDS_PER_CALL,
    MAX_UPSERT_PER_CALL,
};
use edgerag_core::vector::{
    dedup_last_wins, validate_namespace, validate_query, validate_records, VectorError, VectorIndex,
    VectorMatch, VectorQuery, VectorRecord,
};
use js_sys::{Array, Float32Array};
use serde::Serialize;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::vectorize_sys::VectorizeIndexSys;

pub struct VectorizeIndex {
    index: VectorizeIndexSys,
    dims: usize,
}

impl VectorizeIndex {
    pub fn new(binding: JsValue, dims: usize) -> Self {
        VectorizeIndex { index: binding.unchecked_into(), dims }
    }
}

fn backend(what: &str, e: JsValue) -> VectorError {
    let msg = e
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"));
    VectorError::Backend(format!("vectorize {what}: {msg}"))
}

/// Plain JS objects (never `Map`): Vectorize ignores a `Map` as metadata or filter.
fn to_js<T: Serialize>(value: &T) -> Result<JsValue, VectorError> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| VectorError::Backend(format!("vectorize: cannot convert to JS: {e}")))
}

fn from_js<T: serde::de::DeserializeOwned>(what: &str, value: JsValue) -> Result<T, VectorError> {
    serde_wasm_bindgen::from_value(value)
        .map_err(|e| VectorError::Backend(format!("vectorize {what}: unexpected answer: {e}")))
}

async fn call(what: &str, promise: Result<js_sys::Promise, JsValue>) -> Result<JsValue, VectorError> {
    let promise = promise.map_err(|e| backend(what, e))?;
    JsFuture::from(promise).await.map_err(|e| backend(what, e))
}

fn string_array(ids: &[String]) -> Array {
    ids.iter().map(|s| JsValue::from_str(s)).collect()
}

impl VectorizeIndex {
    async fn get_vectors(&self, vector_ids: &[String]) -> Result<Vec<RawVector>, VectorError> {
        let mut out = Vec::with_capacity(vector_ids.len());
        for group in vector_ids.chunks(MAX_IDS_PER_CALL) {
            crate::ledger::subrequest();
            let value = call("getByIds", self.index.get_by_ids(&string_array(group))).await?;
            out.extend(from_js::<Vec<RawVector>>("getByIds", value)?);
        }
        Ok(out)
    }
}

#[async_trait::async_trait(?Send)]
impl VectorIndex for VectorizeIndex {
    fn dims(&self) -> usize {
        self.dims
    }

    fn kind(&self) -> &'static str {
        "vectorize"
    }

    async fn upsert(&self, namespace: &str, records: &[VectorRecord]) -> Result<(), VectorError> {
        validate_records(namespace, records, self.dims)?;
        let records: Vec<&VectorRecord> = dedup_last_wins(records);
        for group in records.chunks(MAX_UPSERT_PER_CALL) {
            let vectors = Array::new();
            for r in group {
                vectors.push(&to_js(&upsert_vector(namespace, r))?);
            }
            crate::ledger::vectorize_upsert(group.len());
            call("upsert", self.index.upsert(&vectors)).await?;
        }
        Ok(())
    }

    async fn query(&self, namespace: &str, query: &VectorQuery) -> Result<Vec<VectorMatch>, VectorError> {
        validate_query(namespace, query, self.dims)?;
        let plan = plan_query(namespace, query);
        let vector: JsValue = Float32Array::from(query.vector.as_slice()).into();
        crate::ledger::vectorize_query(
            plan.options.top_k,
            plan.options.return_values
                || !matches!(
                    plan.options.return_metadata,
                    edgerag_core::vector::vectorize::ReturnMetadata::None
                ),
        );
        let answer = call("query", self.index.query(&vector, &to_js(&plan.options)?)).await?;
        let raw: RawMatches = from_js("query", answer)?;

        // Metadata: inline, or fetched by id when the plan asked for more than 20 matches.
        let mut metadata_by_vid = std::collections::HashMap::new();
        if plan.fetch_metadata {
            let vids: Vec<String> = raw.matches.iter().map(|m| m.id.clone()).collect();
            for v in self.get_vectors(&vids).await? {
                if let Some(stored) = map::parse_metadata(v.metadata.as_ref()) {
                    metadata_by_vid.insert(v.id, stored);
                }
            }
        } else {
            for m in &raw.matches {
                if let Some(stored) = map::parse_metadata(m.metadata.as_ref()) {
                    metadata_by_vid.insert(m.id.clone(), stored);
                }
            }
        }

        let mut matches: Vec<VectorMatch> = raw
            .matches
            .into_iter()
            .filter_map(|m| {
                let stored = metadata_by_vid.remove(&m.id)?;
                Some(VectorMatch { id: stored.chunk_id, score: m.score, metadata: stored.metadata })
            })
            .filter(|m| plan.post_filter.as_ref().is_none_or(|f| f.matches(&m.metadata)))
            .collect();
        // The port's order: score desc, id asc (Vectorize's own tie order is unspecified).
        matches.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
        matches.truncate(plan.top_k);
        Ok(matches)
    }

    async fn get_by_ids(&self, namespace: &str, ids: &[String]) -> Result<Vec<VectorRecord>, VectorError> {
        validate_namespace(namespace)?;
        let vids: Vec<String> = ids.iter().map(|id| map::vector_id(namespace, id)).collect();
        let raw = self.get_vectors(&vids).await?;
        Ok(records_from_vectors(namespace, ids, raw))
    }

    async fn delete_by_ids(&self, namespace: &str, ids: &[String]) -> Result<(), VectorError> {
        validate_namespace(namespace)?;
        let vids: Vec<String> = ids.iter().map(|id| map::vector_id(namespace, id)).collect();
        for group in vids.chunks(MAX_UPSERT_PER_CALL) {
            crate::ledger::vectorize_delete(group.len());
            call("deleteByIds", self.index.delete_by_ids(&string_array(group))).await?;
        }
        Ok(())
    }
}
