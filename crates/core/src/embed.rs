//! The embedder port. Implementations: Workers AI and OpenAI-compatible HTTP (in the worker),
//! the local MiniLM server (reached through the OpenAI-compatible adapter), and
//! [`HashingEmbedder`]-style deterministic fakes for unit tests.
use serde::{Deserialize, Serialize};

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
}

#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize)]
#[serde(tag = "code", rename_all = "SCREAMING_SNAKE_CASE")]
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
}

impl EmbedError {
    /// Worth retrying later (the pipeline retries with backoff); configuration errors are not.
    pub fn is_retryable(&self) -> bool {
        !matches!(self, EmbedError::Config(_))
    }
}

/// Turns texts into vectors. Not `Send`: JS futures in the worker are not.
#[async_trait::async_trait(?Send)]
pub trait Embedder {
    fn info(&self) -> EmbedderInfo;
    /// One vector per text, in order; implementations batch to `info().max_batch` themselves.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError>;
}
