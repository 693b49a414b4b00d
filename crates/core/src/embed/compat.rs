//! Vectors of different models never mix in one namespace. A namespace records the model and
//! dimensions of its vectors (`namespaces.embed_model`, `embed_dims`); indexing it again with
//! another embedder is refused with `EMBEDDING_MODEL_MISMATCH` unless a full re-embed is asked for.
use serde::Serialize;

use super::EmbedderInfo;

/// What the pipeline should do about the namespace's existing vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CompatDecision {
    /// No vectors recorded yet: record this embedder's model and dims.
    Fresh,
    /// Same model and dims: carry on (cached and stored vectors stay valid).
    Same,
    /// Different model, full re-embed requested: delete every vector of the namespace (and forget
    /// its chunks' `embedded` flags) before indexing, then record the new model.
    Reembed,
}

/// The refusal (HTTP 409, code [`ModelMismatch::CODE`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(rename_all = "camelCase")]
#[error(
    "namespace {namespace} holds vectors of {stored_model} ({stored_dims} dims) but the configured embedder is \
     {model} ({dims} dims); re-index with a full re-embed (\"reembed\": true) to replace them"
)]
pub struct ModelMismatch {
    pub namespace: String,
    pub stored_model: String,
    pub stored_dims: usize,
    pub model: String,
    pub dims: usize,
}

impl ModelMismatch {
    pub const CODE: &'static str = "EMBEDDING_MODEL_MISMATCH";
    pub const HTTP_STATUS: u16 = 409;

    /// The API error body `{ "error": { "code", "message", "details" } }`.
    pub fn to_error_json(&self) -> serde_json::Value {
        serde_json::json!({
            "error": { "code": Self::CODE, "message": self.to_string(), "details": self }
        })
    }
}

/// Compares what a namespace holds with the configured embedder. `stored_*` are the namespace
/// row's `embed_model` / `embed_dims` (both `None` for a new or never-embedded namespace).
/// `embed_model` may be the bare model name or `provider|model` (see [`stored_model_id`]).
pub fn check_model_compat(
    namespace: &str,
    stored_model: Option<&str>,
    stored_dims: Option<usize>,
    embedder: &EmbedderInfo,
    reembed: bool,
) -> Result<CompatDecision, ModelMismatch> {
    let (model, dims) = match (stored_model, stored_dims) {
        (None, None) => return Ok(CompatDecision::Fresh),
        (m, d) => (m.unwrap_or(""), d.unwrap_or(0)),
    };
    let same_model = model == embedder.model || model == stored_model_id(embedder);
    if same_model && dims == embedder.dims {
        Ok(CompatDecision::Same)
    } else if reembed {
        Ok(CompatDecision::Reembed)
    } else {
        Err(ModelMismatch {
            namespace: namespace.to_string(),
            stored_model: model.to_string(),
            stored_dims: dims,
            model: embedder.model.clone(),
            dims: embedder.dims,
        })
    }
}

/// The `embed_model` value to record for an embedder: `provider|model` (the same model name from
/// two providers is not guaranteed to give the same vectors).
pub fn stored_model_id(embedder: &EmbedderInfo) -> String {
    format!("{}|{}", embedder.provider, embedder.model)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn info(model: &str, dims: usize) -> EmbedderInfo {
        EmbedderInfo { provider: "p".into(), model: model.into(), dims, max_batch: 1, max_input_chars: None }
    }

    #[test]
    fn decisions() {
        let e = info("all-MiniLM-L6-v2", 384);
        assert_eq!(check_model_compat("repo:a/b", None, None, &e, false), Ok(CompatDecision::Fresh));
        assert_eq!(
            check_model_compat("repo:a/b", Some("all-MiniLM-L6-v2"), Some(384), &e, false),
            Ok(CompatDecision::Same)
        );
        assert_eq!(
            check_model_compat("repo:a/b", Some("@cf/baai/bge-m3"), Some(1024), &e, true),
            Ok(CompatDecision::Reembed)
        );
        let err = check_model_compat("repo:a/b", Some("@cf/baai/bge-m3"), Some(1024), &e, false).unwrap_err();
        assert_eq!(err.stored_dims, 1024);
        let json = err.to_error_json();
        assert_eq!(json["error"]["code"], "EMBEDDING_MODEL_MISMATCH");
        assert!(json["error"]["message"].as_str().unwrap().contains("bge-m3"));
        assert_eq!(
            check_model_compat("n", Some("p|all-MiniLM-L6-v2"), Some(384), &e, false),
            Ok(CompatDecision::Same)
        );
        assert!(check_model_compat("n", Some("other|all-MiniLM-L6-v2"), Some(384), &e, false).is_err());
        // Same model name with other dims (e.g. OpenAI `dimensions`) is a mismatch too.
        assert!(check_model_compat("n", Some("all-MiniLM-L6-v2"), Some(256), &e, false).is_err());
    }
}
