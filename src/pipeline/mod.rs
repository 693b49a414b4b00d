//! The ingestion pipeline: fetch → chunk → embed → index, one queue per stage.
//!
//! Messages carry only ids and ranges ([`messages`]); file bodies are staged in D1 (`job_files`,
//! `job_chunks`) by the request or the fetch stage, because a message must stay under 128 KB and a
//! tarball must not be downloaded again for every batch. Each stage acts on the rows of its range
//! that are in the status it consumes and moves them on in one D1 transaction, so a redelivered or
//! duplicated message finds nothing left to do. The job finishes exactly once ([`finish`]).
//!
//! A message's D1 work is a few round trips whatever its size: its reads in one `batch`, its
//! writes in one transaction, many rows per statement (JSON arrays read back with `json_each`,
//! under D1's 100 bound parameters and 1,000 statements per invocation). Vectors travel to D1 as
//! hex text made BLOBs by `unhex`: a BLOB parameter crosses the D1 binding as a JSON array of byte
//! numbers. Locally every stage, the upload requests and D1 share one workerd thread, so a stage's
//! `stage_done` parts (see [`Ctx::lap`]) include waiting for the others.
pub mod chunk;
pub mod consumer;
pub mod document;
pub mod embed;
pub mod end;
#[cfg(feature = "test-hooks")]
pub mod faults;
pub mod fetch;
pub mod finish;
#[cfg(feature = "test-hooks")]
pub mod graph_check;
pub mod index;
pub mod lifecycle;
pub mod messages;
pub mod plans;
pub mod producer;
pub mod remove;
pub mod stager;
pub mod sync;

use edgerag_core::embed::EmbedError;
use edgerag_core::vector::VectorError;
use worker::Env;

use crate::config::Config;
use crate::store::{Db, StoreError, Stores};

/// Everything a stage (or a request starting work) needs.
pub struct Ctx {
    pub env: Env,
    /// Every database, for what is not about this job's namespace (catalog, dead letters).
    pub stores: Stores,
    /// The database of the job / namespace being worked on.
    pub db: Db,
    pub cfg: Config,
    /// Delivery attempt of the message being handled (1-based; recorded on the job).
    pub attempt: std::cell::Cell<u32>,
    /// Wall time of the parts of the message being handled (see [`Ctx::lap`]).
    timings: std::cell::RefCell<Vec<(&'static str, f64)>>,
    lap_at: std::cell::Cell<f64>,
}

impl Ctx {
    /// A context on the catalog database (a queue batch, before a message names its job).
    pub fn new(env: &Env) -> Result<Ctx, StoreError> {
        let stores = Stores::from_env(env)?;
        Ok(Ctx {
            env: env.clone(),
            db: stores.catalog().clone(),
            stores,
            cfg: Config::from_env(env),
            attempt: std::cell::Cell::new(1),
            timings: Default::default(),
            lap_at: std::cell::Cell::new(crate::time::now_ms()),
        })
    }

    /// The same context with its databases charged to `scope`'s invocation alone in the limits
    /// ledger (a queue batch's: its stages' statements are its own).
    pub fn scoped(self, scope: &crate::ledger::Scope) -> Ctx {
        Ctx { stores: self.stores.scoped(scope), db: self.db.scoped(scope), ..self }
    }

    /// The same context on another database.
    pub fn on(&self, db: Db) -> Ctx {
        Ctx {
            env: self.env.clone(),
            stores: self.stores.clone(),
            db,
            cfg: self.cfg.clone(),
            attempt: std::cell::Cell::new(self.attempt.get()),
            timings: Default::default(),
            lap_at: std::cell::Cell::new(crate::time::now_ms()),
        }
    }

    /// Close the part `part` of the message being handled: the wall time since the previous lap
    /// (or since this context was made) is added to it. `stage_done` logs the parts, so the
    /// ingestion benchmark can tell where a stage's time goes.
    pub fn lap(&self, part: &'static str) {
        let now = crate::time::now_ms();
        let ms = now - self.lap_at.replace(now);
        let mut timings = self.timings.borrow_mut();
        match timings.iter_mut().find(|(p, _)| *p == part) {
            Some((_, total)) => *total += ms,
            None => timings.push((part, ms)),
        }
    }

    /// The parts recorded by [`Ctx::lap`], as `part=ms` pairs (`read=12 embed=340`).
    pub fn laps(&self) -> String {
        self.timings.borrow().iter().map(|(p, ms)| format!("{p}={ms:.0}")).collect::<Vec<_>>().join(" ")
    }

    /// A context on `namespace`'s database; `assign` picks one when the namespace is new (a
    /// request that creates it), else a namespace without one reads the catalog database.
    pub async fn for_namespace(env: &Env, namespace: &str, assign: bool) -> Result<Ctx, StoreError> {
        let base = Ctx::new(env)?;
        let db = if assign {
            base.stores.assign(namespace).await?
        } else {
            base.stores.for_namespace(namespace).await?
        };
        Ok(base.on(db))
    }

    /// A context on the database of job `job_id` (the catalog database when no database has it:
    /// the stages then find no job and drop the message, as for any unknown job).
    pub async fn for_job(&self, job_id: Option<&str>) -> Result<Ctx, StoreError> {
        let db = match job_id {
            Some(id) => self.stores.job_database(id).await?,
            None => None,
        };
        Ok(self.on(db.unwrap_or_else(|| self.stores.catalog().clone())))
    }

    /// First thing every stage does: the job is RUNNING, alive, and this delivery is counted.
    pub async fn mark_running(&self, job_id: &str, stage: &str) -> Result<(), StoreError> {
        crate::store::jobs::mark_running(&self.db, job_id, stage, &crate::time::now_iso(), self.attempt.get())
            .await
    }
}

/// Why a stage failed, and whether delivering the message again could help.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
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

/// A fresh random-enough id: BLAKE3 over time, `Math.random()` and a caller-supplied salt.
pub fn new_id(prefix: &str, salt: &str) -> String {
    let mut h = blake3::Hasher::new();
    h.update(&crate::time::now_ms().to_le_bytes());
    #[cfg(target_arch = "wasm32")]
    h.update(&js_sys::Math::random().to_le_bytes());
    h.update(salt.as_bytes());
    format!("{prefix}_{}", &h.finalize().to_hex()[..24])
}
