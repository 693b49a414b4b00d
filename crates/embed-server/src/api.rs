//! The OpenAI embeddings API as this server speaks it: request validation and the response body.
//! Errors use OpenAI's shape `{ "error": { "message", "type", "code" } }`.
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// Most inputs in one request.
pub const MAX_INPUTS: usize = 2048;
/// Largest request body.
pub const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Input {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Deserialize)]
pub struct EmbeddingsRequest {
    pub input: Input,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub encoding_format: Option<String>,
    #[serde(default)]
    pub dimensions: Option<usize>,
    /// Accepted and ignored (OpenAI's end-user id).
    #[serde(default)]
    pub user: Option<String>,
}

/// An error answer: HTTP status + OpenAI-style body.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> Self {
        ApiError { status, code, message: message.into() }
    }

    pub fn body(&self) -> Value {
        let kind = if self.status >= 500 { "server_error" } else { "invalid_request_error" };
        json!({ "error": { "message": self.message, "type": kind, "code": self.code } })
    }
}

/// A validated request: the texts to embed.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub texts: Vec<String>,
}

/// Parses and validates a request body against the served model (`model_name`, `aliases`, `dims`).
pub fn parse_request(
    body: &[u8],
    model_name: &str,
    aliases: &[&str],
    dims: usize,
) -> Result<Parsed, ApiError> {
    let req: EmbeddingsRequest = serde_json::from_slice(body).map_err(|e| {
        ApiError::new(
            400,
            "invalid_request",
            format!("body must be {{\"input\": string | string[], \"model\"}}: {e}"),
        )
    })?;
    if let Some(model) = req.model.as_deref() {
        if model != model_name && !aliases.contains(&model) {
            return Err(ApiError::new(
                404,
                "model_not_found",
                format!("this server serves {model_name}, not {model:?}"),
            ));
        }
    }
    match req.encoding_format.as_deref() {
        None | Some("float") => {}
        Some(other) => {
            return Err(ApiError::new(
                400,
                "unsupported_encoding",
                format!("encoding_format {other:?}: only \"float\""),
            ))
        }
    }
    if let Some(d) = req.dimensions {
        if d != dims {
            return Err(ApiError::new(
                400,
                "unsupported_dimensions",
                format!("{model_name} has {dims} dimensions, not {d}"),
            ));
        }
    }
    let texts = match req.input {
        Input::One(t) => vec![t],
        Input::Many(v) => v,
    };
    if texts.is_empty() {
        return Err(ApiError::new(400, "empty_input", "input must not be empty"));
    }
    if texts.len() > MAX_INPUTS {
        return Err(ApiError::new(
            400,
            "too_many_inputs",
            format!("at most {MAX_INPUTS} inputs per request"),
        ));
    }
    Ok(Parsed { texts })
}

#[derive(Serialize)]
struct Item<'a> {
    object: &'static str,
    embedding: &'a [f32],
    index: usize,
}

/// The success body.
pub fn response_body(model_name: &str, vectors: &[Vec<f32>], tokens: usize) -> Value {
    let data: Vec<Item> = vectors
        .iter()
        .enumerate()
        .map(|(index, v)| Item { object: "embedding", embedding: v, index })
        .collect();
    json!({
        "object": "list",
        "data": data,
        "model": model_name,
        "usage": { "prompt_tokens": tokens, "total_tokens": tokens },
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn parse(body: &str) -> Result<Parsed, ApiError> {
        parse_request(body.as_bytes(), "all-MiniLM-L6-v2", &["minilm"], 384)
    }

    #[test]
    fn accepts_string_or_array() {
        assert_eq!(parse(r#"{"input":"hi"}"#).unwrap().texts, ["hi"]);
        assert_eq!(
            parse(r#"{"input":["a","b"],"model":"minilm","encoding_format":"float"}"#).unwrap().texts,
            ["a", "b"]
        );
        assert_eq!(parse(r#"{"input":"x","dimensions":384,"user":"u"}"#).unwrap().texts, ["x"]);
    }

    #[test]
    fn rejects_bad_requests() {
        assert_eq!(parse("nope").unwrap_err().status, 400);
        assert_eq!(parse(r#"{"input":[1,2]}"#).unwrap_err().status, 400);
        assert_eq!(parse(r#"{"input":[]}"#).unwrap_err().code, "empty_input");
        assert_eq!(parse(r#"{"input":"x","model":"gpt"}"#).unwrap_err().status, 404);
        assert_eq!(
            parse(r#"{"input":"x","encoding_format":"base64"}"#).unwrap_err().code,
            "unsupported_encoding"
        );
        assert_eq!(parse(r#"{"input":"x","dimensions":10}"#).unwrap_err().code, "unsupported_dimensions");
        let many = format!(r#"{{"input":[{}]}}"#, vec!["\"a\""; MAX_INPUTS + 1].join(","));
        assert_eq!(parse(&many).unwrap_err().code, "too_many_inputs");
        let body = ApiError::new(400, "x", "m").body();
        assert_eq!(body["error"]["type"], "invalid_request_error");
    }

    #[test]
    fn response_shape() {
        let v = response_body("m", &[vec![0.5, 0.5], vec![1.0, 0.0]], 7);
        assert_eq!(v["data"][1]["index"], 1);
        assert_eq!(v["data"][0]["embedding"], json!([0.5, 0.5]));
        assert_eq!(v["usage"]["prompt_tokens"], 7);
        assert_eq!(v["object"], "list");
    }
}
