//! `edgerag-embed-server`: real semantic embeddings offline. Serves all-MiniLM-L6-v2 (384 dims)
//! on candle behind the OpenAI embeddings API, so the worker's `openai` embedder works against it
//! unchanged (`[env.local]`: `OPENAI_BASE_URL=http://127.0.0.1:8788/v1`).
//!
//! - [`model`]: tokenizer + BERT forward + mean pooling over each text's tokens + L2
//!   normalization — what sentence-transformers does for this model (max 256 word pieces). The
//!   forward pass is a fused CPU encoder (`encoder`); [`reference`] keeps candle's `BertModel`
//!   path as the exact f32 reference it is tested and benchmarked against.
//! - [`api`]: the OpenAI request/response mapping (pure, unit-tested).
//! - [`server`]: a small HTTP/1.1 server (`tiny_http`), `POST /v1/embeddings`, `GET /health`.
//!
//! Model files come from `scripts/setup.d/40-model.sh` (`.edgerag/models/all-MiniLM-L6-v2/`).
pub mod api;
mod encoder;
pub mod model;
pub mod reference;
pub mod server;

pub use model::{Embeddings, MiniLm, ModelError};

/// The model's public name (the `model` field of requests and responses).
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";
/// Other names accepted in requests.
pub const MODEL_ALIASES: &[&str] = &["sentence-transformers/all-MiniLM-L6-v2", "minilm"];
/// Default listening address.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8788";

/// Where the model files are by default: `$EDGERAG_MODEL_DIR`, else
/// `$EDGERAG_STATE/models/all-MiniLM-L6-v2`, else `.edgerag/models/all-MiniLM-L6-v2` under the
/// workspace root.
pub fn default_model_dir() -> std::path::PathBuf {
    if let Some(dir) = std::env::var_os("EDGERAG_MODEL_DIR") {
        return dir.into();
    }
    if let Some(state) = std::env::var_os("EDGERAG_STATE") {
        return std::path::PathBuf::from(state).join("models").join(MODEL_NAME);
    }
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.edgerag/models").join(MODEL_NAME)
}
