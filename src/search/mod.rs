//! Search for `POST /v1/search*` and the MCP search tools (both routed by the HTTP layer). The
//! pipeline itself is `edgerag_search` (pure); this module builds its ports from the environment —
//! D1 (FTS5 + chunks + namespaces, over every database), the configured embedder and vector index,
//! the optional generator / reranker — and maps errors to the API's.
//!
//! | var | meaning |
//! | --- | --- |
//! | `SEARCH_PROFILES` | JSON overriding / adding profiles (see `edgerag_search::profile`) |
//! | `GENERATOR`, `GENERATOR_MODEL`, `GENERATOR_BASE_URL`, `GENERATOR_API_KEY` | LLM query transformers and multi-query |
//! | `RERANKER`, `RERANKER_MODEL` | cross-encoder rerank (`workers-ai`, `@cf/baai/bge-reranker-base`) |
//! | `KEYWORD_INDEX_CACHE_MB`, `KEYWORD_INDEX_QUIET_MS` | in-memory BM25 copies of namespaces at rest (`crate::keyword_copy`) |
mod d1;
#[cfg(feature = "test-hooks")]
pub mod suite;
use crate::model_clients;

use edgerag_core::embed::Embedder;
use edgerag_core::vector::VectorIndex;
use edgerag_search::ports::{Clock, EventSink, Generator, Reranker};
use edgerag_search::{
    ProfileRegistry, SearchError, SearchMode, SearchPipeline, SearchResponse, SearchServices,
};
use serde_json::Value;
use worker::Env;

use crate::admission;
use crate::auth::Access;
use crate::background::Background;
use crate::bindings;
use crate::error::ApiError;
use crate::store::Stores;

pub fn api_error(e: SearchError) -> ApiError {
    if e.http_status() >= 500 {
        crate::log::error("search_failed", &[("code", e.code()), ("detail", &e.to_string())]);
    }
    ApiError::new(e.http_status(), e.code(), e.to_string())
}

struct WorkerClock;

impl Clock for WorkerClock {
    fn now_ms(&self) -> f64 {
        crate::time::now_ms()
    }
}

struct LogEvents;

impl EventSink for LogEvents {
    fn event(&self, name: &str, fields: Value) {
        let mut line = serde_json::Map::new();
        line.insert("level".into(), "info".into());
        line.insert("event".into(), name.into());
        if let Value::Object(f) = fields {
            line.extend(f);
        }
        let text = Value::Object(line).to_string();
        #[cfg(target_arch = "wasm32")]
        worker::console_log!("{text}");
        #[cfg(not(target_arch = "wasm32"))]
        eprintln!("{text}");
    }
}

/// Run one search tool against this deployment, over the namespaces `access` may read (a
/// global search covers only those; `simple` fills from the last READY one of them).
pub async fn run(
    env: &Env,
    mode: SearchMode,
    body: &Value,
    access: &Access,
    background: &Background,
) -> Result<SearchResponse, SearchError> {
    let (limit, limit_warning) =
        match admission::search_limit(bindings::var(env, "SEARCH_CONCURRENCY").as_deref()) {
            Ok(n) => (n, None),
            Err(warning) => (admission::DEFAULT_SEARCH_CONCURRENCY, Some(warning)),
        };
    let _permit =
        admission::search_permit(limit, |ms| worker::Delay::from(std::time::Duration::from_millis(ms))).await;
    let stores =
        Stores::from_env(env).map_err(|e| SearchError::BackendUnavailable { message: e.to_string() })?;
    let (copies, copy_warnings) = d1::CopyConfig::from_env(env);
    let store =
        d1::D1Search::new(stores, access.clone()).with_copies(copies).with_background(background.clone());
    let (profiles, mut config_warnings) =
        ProfileRegistry::from_config(bindings::var(env, "SEARCH_PROFILES").as_deref());
    config_warnings.extend(limit_warning);
    config_warnings.extend(copy_warnings);

    let embedder: Option<Box<dyn Embedder>> = match crate::embed::embedder_from_env(env) {
        Ok(e) => Some(e),
        Err(e) => {
            config_warnings.push(format!("vector retrieval unavailable: embedder configuration ({e})"));
            None
        }
    };
    let vectors: Option<Box<dyn VectorIndex>> = match crate::vector::vector_index_from_env(env) {
        Ok(v) => Some(v),
        Err(e) => {
            config_warnings.push(format!("vector retrieval unavailable: vector index ({e})"));
            None
        }
    };
    let generator: Option<Box<dyn Generator>> = model_clients::generator_from_env(env).unwrap_or_else(|e| {
        config_warnings.push(format!("text model unavailable ({e}); LLM query transformers skipped"));
        None
    });
    let reranker: Option<Box<dyn Reranker>> = model_clients::reranker_from_env(env).unwrap_or_else(|e| {
        config_warnings.push(format!("cross-encoder unavailable ({e})"));
        None
    });
    for w in &config_warnings {
        crate::log::warn("search_config", &[("detail", w)]);
    }
    let services = SearchServices {
        keyword: &store,
        chunks: &store,
        catalog: &store,
        embedder: embedder.as_deref(),
        vectors: vectors.as_deref(),
        generator: generator.as_deref(),
        reranker: reranker.as_deref(),
        clock: &WorkerClock,
        events: &LogEvents,
    };
    let pipeline = SearchPipeline { services, profiles: &profiles, config_warnings: &config_warnings };
    let result = pipeline.run(mode, body).await;
    // Copies found missing are built after the answer, not between its steps.
    store.start_background_work();
    result
}
