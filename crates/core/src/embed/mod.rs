//! The embedder port and everything about embeddings that needs no I/O.
//!
//! Implementations of [`Embedder`]: Workers AI and OpenAI-compatible HTTP live in the worker (they
//! need `worker::Env`); their request/response mapping lives here as pure functions
//! ([`workers_ai`], [`openai`]) so it is tested natively. The local MiniLM server
//! (`crates/embed-server`) is reached through the OpenAI-compatible adapter. [`HashingEmbedder`] is a
//! deterministic fake for unit tests only. [`cache`] keeps the promise that the same text is never
//! embedded twice for one model.
use serde::{Deserialize, Serialize};

pub mod cache;
pub mod compat;
pub mod config;
mod hashing;
pub mod model_specs;
pub mod openai;
pub mod workers_ai;

pub use cache::{embed_cached, CachedEmbedder, EmbedStats, EmbeddingCache, InMemoryEmbeddingCache};
pub use compat::{check_model_compat, CompatDecision, ModelMismatch};
pub use config::EmbedderConfig;
pub use hashing::HashingEmbedder;
pub use model_specs::ModelSpec;

/// Which model produced a vector. Vectors of different models are never mixed in one namespace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbedderInfo {
    /// e.g. `workers-ai`, `openai`, `hashing`.
    pub provider: String,
    /// e.g. `@cf/baai/bge-m3`, `all-MiniLM-L6-v2`.
    pub model: String,
    pub dims: usize,
    /// Largest batch the backend accepts in one call.
    pub max_batch: usize,
    /// Inputs longer than this many characters are cut to it before embedding (the model's input
    /// limit, stated rather than silent: [`EmbedStats::truncated`] counts the texts it cut).
    /// `None`: the backend truncates (or rejects) on its own terms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_input_chars: Option<usize>,
}

/// Serializes as `{ "code": "EMBED_…", "message": "…" }` (the API error shape, and `last_error`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EmbedError {
    #[error("embedding backend timed out")]
    Timeout,
    #[error("embedding backend is rate limiting (429)")]
    RateLimited,
    #[error("embedding backend failed with status {status}: {message}")]
    Backend { status: u16, message: String },
    #[error("embedding backend returned {got} dimensions, expected {expected}")]
    WrongDimension { expected: usize, got: usize },
    #[error("embedding backend returned {got} vectors for {expected} texts")]
    WrongCount { expected: usize, got: usize },
    #[error("embedding backend is misconfigured: {0}")]
    Config(String),
    #[error("embedding cache failed: {0}")]
    Cache(String),
}

impl EmbedError {
    /// Worth retrying later (the pipeline retries with backoff). Configuration errors are not, and
    /// neither are 4xx answers other than 408/429: the same request would fail the same way.
    pub fn is_retryable(&self) -> bool {
        match self {
            EmbedError::Config(_) => false,
            EmbedError::Backend { status, .. } => *status == 0 || *status == 408 || *status >= 500,
            _ => true,
        }
    }

    /// The stable error code (also the serialized `code` field) used in job status and API errors.
    pub fn code(&self) -> &'static str {
        match self {
            EmbedError::Timeout => "EMBED_TIMEOUT",
            EmbedError::RateLimited => "EMBED_RATE_LIMITED",
            EmbedError::Backend { .. } => "EMBED_BACKEND",
            EmbedError::WrongDimension { .. } => "EMBED_WRONG_DIMENSION",
            EmbedError::WrongCount { .. } => "EMBED_WRONG_COUNT",
            EmbedError::Config(_) => "EMBED_CONFIG",
            EmbedError::Cache(_) => "EMBED_CACHE",
        }
    }
}

impl Serialize for EmbedError {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("code", self.code())?;
        map.serialize_entry("message", &self.to_string())?;
        map.serialize_entry("retryable", &self.is_retryable())?;
        map.end()
    }
}

/// Turns texts into vectors. Not `Send`: JS futures in the worker are not.
#[async_trait::async_trait(?Send)]
pub trait Embedder {
    fn info(&self) -> EmbedderInfo;
    /// One vector per text, in order; implementations batch to `info().max_batch` themselves.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

#[async_trait::async_trait(?Send)]
impl<E: Embedder + ?Sized> Embedder for Box<E> {
    fn info(&self) -> EmbedderInfo {
        (**self).info()
    }
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        (**self).embed(texts).await
    }
}

#[async_trait::async_trait(?Send)]
impl<E: Embedder + ?Sized> Embedder for &E {
    fn info(&self) -> EmbedderInfo {
        (**self).info()
    }
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        (**self).embed(texts).await
    }
}

/// Cuts `text` to at most `max_chars` characters (on a char boundary). Returns the text and whether
/// it was cut, so callers can count truncations instead of hiding them.
pub fn truncate_chars(text: &str, max_chars: Option<usize>) -> (&str, bool) {
    let Some(max) = max_chars else { return (text, false) };
    match text.char_indices().nth(max) {
        Some((byte, _)) => (&text[..byte], true),
        None => (text, false),
    }
}

/// Checks a backend's answer: one vector per text, each of the expected dimension, all finite.
pub fn check_vectors(vectors: &[Vec<f32>], expected_count: usize, dims: usize) -> Result<(), EmbedError> {
    if vectors.len() != expected_count {
        return Err(EmbedError::WrongCount { expected: expected_count, got: vectors.len() });
    }
    for v in vectors {
        if v.len() != dims {
            return Err(EmbedError::WrongDimension { expected: dims, got: v.len() });
        }
        if v.iter().any(|x| !x.is_finite()) {
            return Err(EmbedError::Backend { status: 200, message: "non-finite value in embedding".into() });
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn truncation_is_reported_and_char_safe() {
        assert_eq!(truncate_chars("héllo", Some(2)), ("hé", true));
        assert_eq!(truncate_chars("héllo", Some(5)), ("héllo", false));
        assert_eq!(truncate_chars("héllo", None), ("héllo", false));
        assert_eq!(truncate_chars("日本語", Some(1)), ("日", true));
    }

    #[test]
    fn vector_checks() {
        assert_eq!(check_vectors(&[vec![0.0; 3]], 1, 3), Ok(()));
        assert_eq!(check_vectors(&[vec![0.0; 3]], 2, 3), Err(EmbedError::WrongCount { expected: 2, got: 1 }));
        assert_eq!(
            check_vectors(&[vec![0.0; 4]], 1, 3),
            Err(EmbedError::WrongDimension { expected: 3, got: 4 })
        );
        assert!(check_vectors(&[vec![f32::NAN; 3]], 1, 3).is_err());
    }

    #[test]
    fn retryability() {
        assert!(EmbedError::Timeout.is_retryable());
        assert!(EmbedError::RateLimited.is_retryable());
        assert!(EmbedError::Backend { status: 503, message: String::new() }.is_retryable());
        assert!(!EmbedError::Backend { status: 400, message: String::new() }.is_retryable());
        assert!(!EmbedError::Config("x".into()).is_retryable());
        let json = serde_json::to_value(EmbedError::WrongDimension { expected: 3, got: 4 }).unwrap();
        assert_eq!(json["code"], "EMBED_WRONG_DIMENSION");
        assert_eq!(json["message"], "embedding backend returned 4 dimensions, expected 3");
        let json = serde_json::to_value(EmbedError::Config("no key".into())).unwrap();
        assert_eq!(json["code"], "EMBED_CONFIG");
        assert_eq!(json["retryable"], false);
    }
}
