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

/// The binding name of Workers AI.
pub const AI_BINDING: &str = "AI";
/// The D1 binding holding `embedding_cache` and `local_vectors`.
pub const DB_BINDING: &str = "DB";

/// A string var or secret, `None` when unset.
pub(crate) fn env_string(env: &Env, name: &str) -> Option<String> {
    js_sys::Reflect::get(env, &wasm_bindgen::JsValue::from_str(name)).ok()?.as_string()
}

/// The embedder configuration of this deployment (no binding is touched).
pub fn embedder_config(env: &Env) -> Result<EmbedderConfig, EmbedError> {
    EmbedderConfig::from_vars(|name| env_string(env, name))
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

/// The D1 embedding cache on binding `DB`.
pub fn embedding_cache_from_env(env: &Env) -> Result<D1EmbeddingCache, EmbedError> {
    let db = env.d1(DB_BINDING).map_err(|e| {
        EmbedError::Config(format!("the embedding cache needs the D1 binding `{DB_BINDING}`: {e}"))
    })?;
    Ok(D1EmbeddingCache::new(db))
}

/// The configured embedder behind the D1 cache: what the pipeline's embed stage should use.
/// `stats()` on the result tells how many texts were cached, embedded, truncated.
pub fn cached_embedder_from_env(
    env: &Env,
) -> Result<CachedEmbedder<Box<dyn Embedder>, D1EmbeddingCache>, EmbedError> {
    Ok(CachedEmbedder::new(embedder_from_env(env)?, embedding_cache_from_env(env)?))
}

/// What `/health` and the status endpoint show about embeddings and vectors:
/// `{ "embedder": {provider, model, dims, maxBatch, maxInputChars?}, "vectorIndex": {kind, dims} }`,
/// with `{ "error": {code, message} }` in place of a part that is misconfigured.
pub fn describe(env: &Env) -> serde_json::Value {
    let embedder = match embedder_config(env) {
        Ok(c) => serde_json::to_value(c.info()).unwrap_or_default(),
        Err(e) => serde_json::json!({ "error": e }),
    };
    serde_json::json!({
        "embedder": embedder,
        "vectorIndex": crate::vector::describe(env),
    })
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
