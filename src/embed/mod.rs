//! Embedders for the worker, chosen by configuration (`EMBEDDER`, `EMBED_MODEL`, `EMBED_DIMS`, …;
//! parsed by [`edgerag_core::embed::EmbedderConfig`]):
//!
//! - `workers-ai` — the `AI` binding ([`WorkersAiEmbedder`]), default `@cf/baai/bge-m3`;
//! - `openai` — any OpenAI-compatible `POST {OPENAI_BASE_URL}/embeddings` ([`OpenAiEmbedder`]);
//!   `[env.local]` points it at the local MiniLM server (`scripts/embed-server.sh`).
//!
//! [`D1EmbeddingCache`] keeps embeddings by model + text hash in D1 (`embedding_cache`), so the
//! pipeline's [`edgerag_core::embed::embed_cached`] never sends the same text twice.
use edgerag_core::embed::{CachedEmbedder, EmbedError, Embedder, EmbedderConfig};
use worker::Env;

mod cache;
mod openai;
mod workers_ai;

pub use cache::D1EmbeddingCache;
pub use openai::OpenAiEmbedder;
pub use workers_ai::WorkersAiEmbedder;

use crate::bindings::{self, AI as AI_BINDING};
use crate::store::Stores;

/// The embedder configuration of this deployment (no binding is touched).
pub fn embedder_config(env: &Env) -> Result<EmbedderConfig, EmbedError> {
    EmbedderConfig::from_vars(|name| bindings::var(env, name))
}

/// The configured embedder. Errors are [`EmbedError::Config`]: unknown provider or model, missing
/// `OPENAI_BASE_URL`, no `AI` binding for `workers-ai`, …
pub fn embedder_from_env(env: &Env) -> Result<Box<dyn Embedder>, EmbedError> {
    match embedder_config(env)? {
        config @ EmbedderConfig::WorkersAi { timeout_ms, .. } => {
            let ai = env.ai(AI_BINDING).map_err(|e| {
                EmbedError::Config(format!(
                    "EMBEDDER=workers-ai needs the `{AI_BINDING}` binding ({e}); locally use EMBEDDER=openai with the \
                     local embedding server"
                ))
            })?;
            Ok(Box::new(WorkersAiEmbedder::new(ai, config.info(), timeout_ms)))
        }
        EmbedderConfig::OpenAi(config) => Ok(Box::new(OpenAiEmbedder::new(config))),
    }
}

/// The embedding cache: keys are global, so it lives in the catalog database.
pub fn embedding_cache_from_env(env: &Env) -> Result<D1EmbeddingCache, EmbedError> {
    let stores = Stores::from_env(env)
        .map_err(|e| EmbedError::Config(format!("the embedding cache needs its D1 database: {e}")))?;
    Ok(D1EmbeddingCache::new(stores.catalog().clone()))
}

/// The configured embedder behind the D1 cache: what the pipeline's embed stage should use.
/// `stats()` on the result tells how many texts were cached, embedded, truncated.
pub fn cached_embedder_from_env(
    env: &Env,
) -> Result<CachedEmbedder<Box<dyn Embedder>, D1EmbeddingCache>, EmbedError> {
    Ok(CachedEmbedder::new(embedder_from_env(env)?, embedding_cache_from_env(env)?))
}

/// The embedder of this deployment as the API shows it (`None` when misconfigured).
pub fn embedder_view(env: &Env) -> Option<crate::api::EmbedderView> {
    let info = embedder_config(env).ok()?.info();
    Some(crate::api::EmbedderView { provider: info.provider, model: info.model, dims: info.dims as u32 })
}

/// A structured log line when inputs were cut to the model's limit (never silent).
pub(crate) fn log_truncation(info: &edgerag_core::embed::EmbedderInfo, count: usize) {
    let line = serde_json::json!({
        "level": "warn",
        "event": "embed_input_truncated",
        "provider": info.provider,
        "model": info.model,
        "maxInputChars": info.max_input_chars,
        "count": count,
    });
    worker::console_log!("{line}");
}
