//! The ingestion pipeline: fetch → chunk → embed → index, one queue per stage.
//!
//! Messages carry only ids and ranges ([`messages`]); file bodies are staged in D1 (`job_files`,
//! `job_chunks`) by the request or the fetch stage, because a message must stay under 128 KB and a
//! tarball must not be downloaded again for every batch. Each stage acts on the rows of its range
//! that are in the status it consumes and moves them on in one D1 transaction, so a redelivered or
//! duplicated message finds nothing left to do. The job finishes exactly once ([`finish`]).
pub mod chunk;
pub mod consumer;
pub mod embed;
pub mod fetch;
pub mod finish;
pub mod index;
pub mod messages;
pub mod producer;
pub mod stager;

use edgerag_core::embed::EmbedError;
use edgerag_core::vector::VectorError;
use worker::Env;

use crate::config::Config;
use crate::store::{Db, StoreError};

/// Everything a stage needs.
pub struct Ctx {
    pub env: Env,
    pub db: Db,
    pub cfg: Config,
    /// Delivery attempt of the message being handled (1-based; recorded on the job).
    pub attempt: std::cell::Cell<u32>,
}

impl Ctx {
    pub fn new(env: &Env) -> Result<Ctx, StoreError> {
        Ok(Ctx {
            env: env.clone(),
            db: Db::from_env(env)?,
            cfg: Config::from_env(env),
            attempt: std::cell::Cell::new(1),
        })
    }

    /// First thing every stage does: the job is RUNNING, alive, and this delivery is counted.
    pub async fn mark_running(&self, job_id: &str, stage: &str) -> Result<(), StoreError> {
        crate::store::jobs::mark_running(&self.db, job_id, stage, &crate::time::now_iso(), self.attempt.get())
            .await
    }
}

/// Why a stage failed, and whether delivering the message again could help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageError {
    pub code: String,
    pub message: String,
    pub retryable: bool,
}

impl StageError {
    pub fn retryable(code: &str, message: impl Into<String>) -> StageError {
        StageError { code: code.into(), message: message.into(), retryable: true }
    }

    pub fn permanent(code: &str, message: impl Into<String>) -> StageError {
        StageError { code: code.into(), message: message.into(), retryable: false }
    }
}

impl std::fmt::Display for StageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl From<StoreError> for StageError {
    fn from(e: StoreError) -> Self {
        StageError::retryable("STORE_ERROR", e.to_string())
    }
}

impl From<EmbedError> for StageError {
    fn from(e: EmbedError) -> Self {
        StageError { code: e.code().into(), message: e.to_string(), retryable: e.is_retryable() }
    }
}

impl From<VectorError> for StageError {
    fn from(e: VectorError) -> Self {
        StageError { code: e.code().into(), message: e.to_string(), retryable: e.is_retryable() }
    }
}

impl From<worker::Error> for StageError {
    fn from(e: worker::Error) -> Self {
        StageError::retryable("QUEUE_ERROR", e.to_string())
    }
}

/// What an indexed file depends on besides its bytes: the chunker's schema version and the
/// embedding model. A file whose key differs is re-indexed even when its bytes did not change.
pub fn index_key(env: &Env) -> String {
    let version = edgerag_core::chunk::CHUNK_SCHEMA_VERSION;
    match crate::embed::embedder_config(env) {
        Ok(config) => {
            let info = config.info();
            format!("v{version}|{}|{}|{}", info.provider, info.model, info.dims)
        }
        Err(_) => format!("v{version}|unconfigured"),
    }
}

/// The embedder of this deployment as the API shows it.
pub fn embedder_view(env: &Env) -> Option<crate::api::EmbedderView> {
    let info = crate::embed::embedder_config(env).ok()?.info();
    Some(crate::api::EmbedderView { provider: info.provider, model: info.model, dims: info.dims as u32 })
}

/// `vectorize` or `local`.
pub fn vector_index_kind(env: &Env) -> String {
    match crate::vector::index_kind(env) {
        Ok(crate::vector::IndexKind::Vectorize) => "vectorize".into(),
        Ok(crate::vector::IndexKind::LocalD1) => "local".into(),
        Err(e) => format!("misconfigured: {e}"),
    }
}

/// A fresh random-enough id: BLAKE3 over time, `Math.random()` and a caller-supplied salt.
pub fn new_id(prefix: &str, salt: &str) -> String {
    let mut h = blake3::Hasher::new();
    h.update(&crate::time::now_ms().to_le_bytes());
    #[cfg(target_arch = "wasm32")]
    h.update(&js_sys::Math::random().to_le_bytes());
    h.update(salt.as_bytes());
    format!("{prefix}_{}", &h.finalize().to_hex()[..24])
}
