//! The OpenAI-compatible `POST {base}/embeddings` mapping (OpenAI, text-embeddings-inference, the
//! local `edgerag-embed-server`, …): request body, status → [`EmbedError`], response → vectors.
//! The worker's adapter only moves bytes; everything that can be wrong is decided here.
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{check_vectors, EmbedError};

/// Default per-request timeout of the worker's adapter.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// Default texts per request (OpenAI accepts 2048; self-hosted servers usually far fewer).
pub const DEFAULT_MAX_BATCH: usize = 32;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenAiConfig {
    /// e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8788/v1`.
    pub base_url: String,
    pub model: String,
    pub dims: usize,
    /// Never serialized (it is a secret).
    #[serde(skip)]
    pub api_key: Option<String>,
    /// Send `dimensions` in the request (OpenAI text-embedding-3 models shorten their vectors to it;
    /// many other servers reject the field). `EMBED_SEND_DIMENSIONS=true`.
    pub send_dimensions: bool,
    pub max_batch: usize,
    pub timeout_ms: u64,
    /// `EMBED_MAX_INPUT_CHARS`: cut longer inputs (counted) before sending.
    pub max_input_chars: Option<usize>,
}

/// The URL of the embeddings endpoint for a base URL (`…/v1` → `…/v1/embeddings`; a base that
/// already ends in `/embeddings` is used as is).
pub fn embeddings_url(base_url: &str) -> String {
    let base = base_url.trim().trim_end_matches('/');
    if base.ends_with("/embeddings") {
        base.to_string()
    } else {
        format!("{base}/embeddings")
    }
}

/// The JSON body for one batch.
pub fn request_body(config: &OpenAiConfig, texts: &[String]) -> Value {
    let mut body = serde_json::json!({
        "model": config.model,
        "input": texts,
        "encoding_format": "float",
    });
    if config.send_dimensions {
        body["dimensions"] = Value::from(config.dims);
    }
    body
}

/// Request headers (the key goes in `Authorization: Bearer`).
pub fn request_headers(config: &OpenAiConfig) -> Vec<(&'static str, String)> {
    let mut headers = vec![("content-type", "application/json".to_string())];
    if let Some(key) = config.api_key.as_deref().filter(|k| !k.is_empty()) {
        headers.push(("authorization", format!("Bearer {key}")));
    }
    headers
}

#[derive(Deserialize)]
struct ResponseBody {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    embedding: Vec<f32>,
    #[serde(default)]
    index: Option<usize>,
}

/// Maps an HTTP answer to vectors (ordered by `index`) or a typed error.
pub fn parse_response(
    status: u16,
    body: &str,
    expected: usize,
    dims: usize,
) -> Result<Vec<Vec<f32>>, EmbedError> {
    if let Some(err) = status_error(status, body) {
        return Err(err);
    }
    let parsed: ResponseBody = serde_json::from_str(body).map_err(|e| EmbedError::Backend {
        status,
        message: format!("unreadable embeddings response: {}", short(&e.to_string())),
    })?;
    let mut items = parsed.data;
    if items.iter().all(|i| i.index.is_some()) {
        items.sort_by_key(|i| i.index);
        let in_order = items.iter().enumerate().all(|(pos, i)| i.index == Some(pos));
        if !in_order && items.len() == expected {
            return Err(EmbedError::Backend { status, message: "embedding indexes are not 0..n".into() });
        }
    }
    let vectors: Vec<Vec<f32>> = items.into_iter().map(|i| i.embedding).collect();
    check_vectors(&vectors, expected, dims)?;
    Ok(vectors)
}

/// The error for a non-2xx status, if any.
pub fn status_error(status: u16, body: &str) -> Option<EmbedError> {
    match status {
        200..=299 => None,
        429 => Some(EmbedError::RateLimited),
        408 | 504 => Some(EmbedError::Timeout),
        401 | 403 => Some(EmbedError::Config(format!(
            "the embeddings endpoint refused the credentials ({status}): {}",
            error_message(body)
        ))),
        404 => Some(EmbedError::Config(format!(
            "no embeddings endpoint or model at this URL (404): {}",
            error_message(body)
        ))),
        _ => Some(EmbedError::Backend { status, message: error_message(body) }),
    }
}

/// `error.message` of an OpenAI-style error body, or the start of the body.
fn error_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let msg = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("error"))
            .or_else(|| v.get("message"))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    short(&msg.unwrap_or_else(|| body.to_string()))
}

fn short(s: &str) -> String {
    let (t, cut) = super::truncate_chars(s.trim(), Some(300));
    if cut {
        format!("{t}…")
    } else {
        t.to_string()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn config() -> OpenAiConfig {
        OpenAiConfig {
            base_url: "http://127.0.0.1:8788/v1/".into(),
            model: "all-MiniLM-L6-v2".into(),
            dims: 2,
            api_key: Some("sk-test".into()),
            send_dimensions: false,
            max_batch: 32,
            timeout_ms: 1000,
            max_input_chars: None,
        }
    }

    #[test]
    fn url_body_and_headers() {
        assert_eq!(embeddings_url("http://h/v1/"), "http://h/v1/embeddings");
        assert_eq!(embeddings_url("http://h/v1/embeddings"), "http://h/v1/embeddings");
        let c = config();
        let body = request_body(&c, &["a".into(), "b".into()]);
        assert_eq!(
            body,
            serde_json::json!({"model": "all-MiniLM-L6-v2", "input": ["a", "b"], "encoding_format": "float"})
        );
        let body = request_body(&OpenAiConfig { send_dimensions: true, ..c.clone() }, &["a".into()]);
        assert_eq!(body["dimensions"], 2);
        assert!(request_headers(&c).contains(&("authorization", "Bearer sk-test".into())));
        assert_eq!(request_headers(&OpenAiConfig { api_key: None, ..c }).len(), 1);
    }

    #[test]
    fn response_ordered_by_index() {
        let body = r#"{"object":"list","data":[{"embedding":[3,4],"index":1},{"embedding":[1,2],"index":0}],"model":"m","usage":{"prompt_tokens":2,"total_tokens":2}}"#;
        assert_eq!(parse_response(200, body, 2, 2).unwrap(), vec![vec![1.0, 2.0], vec![3.0, 4.0]]);
    }

    #[test]
    fn wrong_count_and_dimension() {
        let body = r#"{"data":[{"embedding":[1,2],"index":0}]}"#;
        assert_eq!(parse_response(200, body, 2, 2), Err(EmbedError::WrongCount { expected: 2, got: 1 }));
        assert_eq!(parse_response(200, body, 1, 3), Err(EmbedError::WrongDimension { expected: 3, got: 2 }));
    }

    #[test]
    fn statuses_map_to_typed_errors() {
        assert_eq!(parse_response(429, "{}", 1, 2), Err(EmbedError::RateLimited));
        assert_eq!(parse_response(504, "", 1, 2), Err(EmbedError::Timeout));
        let err = parse_response(503, r#"{"error":{"message":"overloaded"}}"#, 1, 2).unwrap_err();
        assert_eq!(err, EmbedError::Backend { status: 503, message: "overloaded".into() });
        assert!(err.is_retryable());
        let err = parse_response(401, r#"{"error":{"message":"bad key"}}"#, 1, 2).unwrap_err();
        assert!(matches!(err, EmbedError::Config(ref m) if m.contains("bad key")));
        assert!(!err.is_retryable());
        let err = parse_response(400, "plain text failure", 1, 2).unwrap_err();
        assert_eq!(err, EmbedError::Backend { status: 400, message: "plain text failure".into() });
        assert!(!err.is_retryable());
        assert!(matches!(
            parse_response(200, "not json", 1, 2),
            Err(EmbedError::Backend { status: 200, .. })
        ));
    }
}
