//! Vector indexes for the worker: Cloudflare Vectorize when a `VECTORIZE` binding exists, else the
//! exact local index in D1 (`local_vectors`, in each namespace's database). `VECTOR_INDEX=local|vectorize`
//! forces one. Both implement [`edgerag_core::vector::VectorIndex`] and run the shared suite
//! (`edgerag_core::vector::testing`); the local one runs it in workerd through `test_routes`
//! (built only with the `test-hooks` feature).
use edgerag_core::vector::{VectorError, VectorIndex};
use wasm_bindgen::JsValue;
use worker::Env;

use crate::bindings::{self, VECTORIZE as VECTORIZE_BINDING};
use crate::store::Stores;

mod local;
#[cfg(feature = "test-hooks")]
pub mod test_routes;
mod vectorize;
mod vectorize_sys;

pub use local::LocalD1Index;
pub use vectorize::VectorizeIndex;

/// Which index this deployment uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexKind {
    Vectorize,
    LocalD1,
}

impl IndexKind {
    pub fn as_str(self) -> &'static str {
        match self {
            IndexKind::Vectorize => "vectorize",
            IndexKind::LocalD1 => "local-d1",
        }
    }
}

fn vectorize_binding(env: &Env) -> Option<JsValue> {
    bindings::object(env, VECTORIZE_BINDING)
}

/// Vectorize if bound (unless `VECTOR_INDEX=local`), else local.
pub fn index_kind(env: &Env) -> Result<IndexKind, VectorError> {
    let forced = bindings::var(env, "VECTOR_INDEX").filter(|v| !v.trim().is_empty());
    match forced.as_deref().map(str::trim) {
        Some("local") | Some("local-d1") => Ok(IndexKind::LocalD1),
        Some("vectorize") if vectorize_binding(env).is_none() => Err(VectorError::Invalid(format!(
            "VECTOR_INDEX=vectorize but there is no `{VECTORIZE_BINDING}` binding"
        ))),
        Some("vectorize") => Ok(IndexKind::Vectorize),
        Some(other) => {
            Err(VectorError::Invalid(format!("VECTOR_INDEX must be local or vectorize, not {other:?}")))
        }
        None if vectorize_binding(env).is_some() => Ok(IndexKind::Vectorize),
        None => Ok(IndexKind::LocalD1),
    }
}

/// The vector index of this deployment, sized to the configured embedder's dimensions.
pub fn vector_index_from_env(env: &Env) -> Result<Box<dyn VectorIndex>, VectorError> {
    let dims = crate::embed::embedder_config(env)
        .map_err(|e| VectorError::Invalid(format!("embedder configuration: {e}")))?
        .dims();
    vector_index_with_dims(env, dims)
}

/// The vector index of this deployment for vectors of `dims` dimensions.
pub fn vector_index_with_dims(env: &Env, dims: usize) -> Result<Box<dyn VectorIndex>, VectorError> {
    match index_kind(env)? {
        IndexKind::Vectorize => {
            let binding = vectorize_binding(env)
                .ok_or_else(|| VectorError::Invalid(format!("no `{VECTORIZE_BINDING}` binding")))?;
            Ok(Box::new(VectorizeIndex::new(binding, dims)))
        }
        IndexKind::LocalD1 => {
            let stores = Stores::from_env(env)
                .map_err(|e| VectorError::Backend(format!("the local index needs its D1 databases: {e}")))?;
            Ok(Box::new(LocalD1Index::new(stores, dims).with_cache_bytes(local_cache_bytes(env)?)))
        }
    }
}

/// After a job: the local index's stored snapshot of the namespace's in-memory copy brought to its
/// current generation, so that new isolates read the copy ready-made instead of building it
/// (nothing with Vectorize or with copies off), as far as `budget` goes. Logged; never fails the
/// caller. `false` when parts of the snapshot are left for another call.
pub async fn prepare_snapshot(env: &Env, namespace: &str, budget: &dyn crate::ledger::Budget) -> bool {
    let started = crate::time::now_ms();
    let result = async {
        if !matches!(index_kind(env)?, IndexKind::LocalD1) {
            return Ok(None);
        }
        let dims = crate::embed::embedder_config(env)
            .map_err(|e| VectorError::Invalid(format!("embedder configuration: {e}")))?
            .dims();
        let stores = Stores::from_env(env).map_err(|e| VectorError::Backend(e.to_string()))?;
        LocalD1Index::new(stores, dims)
            .with_cache_bytes(local_cache_bytes(env)?)
            .prepare_snapshot(namespace, budget)
            .await
    }
    .await;
    let ms = format!("{:.0}", crate::time::now_ms() - started);
    match result {
        Ok(Some(state)) => {
            crate::log::info(
                "vector_snapshot_prepared",
                &[("namespace", namespace), ("state", &format!("{state:?}")), ("ms", &ms)],
            );
            state != local::SnapshotState::Partial
        }
        Ok(None) => true,
        Err(e) => {
            crate::log::warn(
                "vector_snapshot_failed",
                &[("namespace", namespace), ("detail", &e.to_string()), ("ms", &ms)],
            );
            true
        }
    }
}

/// `LOCAL_INDEX_CACHE_MB`: memory for the local index's in-memory copies (default 16; 0 turns
/// them off and every query scans D1).
pub fn local_cache_bytes(env: &Env) -> Result<usize, VectorError> {
    let name = "LOCAL_INDEX_CACHE_MB";
    match crate::config::whole_number(name, bindings::var(env, name).as_deref(), 0..=1024) {
        Ok(None) => Ok(local::DEFAULT_CACHE_BYTES),
        Ok(Some(mb)) => Ok(mb as usize * 1024 * 1024),
        Err(e) => Err(VectorError::Invalid(format!("{e} (megabytes)"))),
    }
}

/// The index kind as `/health` and the status endpoint show it: `vectorize`, `local`, or
/// `misconfigured: …`.
pub fn kind_label(env: &Env) -> String {
    match index_kind(env) {
        Ok(IndexKind::Vectorize) => "vectorize".into(),
        Ok(IndexKind::LocalD1) => "local".into(),
        Err(e) => format!("misconfigured: {e}"),
    }
}
