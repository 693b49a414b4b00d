//! The Workers AI text-embedding mapping (`env.AI.run(model, { text: [...] })`): request, response
//! (`{ shape: [n, dims], data: [[...], ...] }`) and the binding's error messages → [`EmbedError`].
use serde::{Deserialize, Serialize};

use super::{check_vectors, EmbedError};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Request<'a> {
    pub text: &'a [String],
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Response {
    #[serde(default)]
    pub shape: Vec<usize>,
    pub data: Vec<Vec<f32>>,
}

pub fn request(texts: &[String]) -> Request<'_> {
    Request { text: texts }
}

/// Checks the answer for a batch against the model's dimension.
pub fn vectors(response: Response, dims: usize, expected: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
    if response.shape.len() == 2 && response.shape[1] != dims {
        return Err(EmbedError::WrongDimension { expected: dims, got: response.shape[1] });
    }
    check_vectors(&response.data, expected, dims)?;
    Ok(response.data)
}

/// Classifies an error thrown by the AI binding (a JS error whose message carries the cause, e.g.
/// `AiError: 3040: Capacity temporarily exceeded` or `… 429 …`).
pub fn classify_error(message: &str) -> EmbedError {
    let lower = message.to_ascii_lowercase();
    let short: String = message.chars().take(300).collect();
    if lower.contains("timed out") || lower.contains("timeout") || lower.contains("3007") {
        EmbedError::Timeout
    } else if lower.contains("429")
        || lower.contains("rate limit")
        || lower.contains("too many requests")
        || lower.contains("capacity")
        || lower.contains("3040")
    {
        EmbedError::RateLimited
    } else if lower.contains("no such model") || lower.contains("model not found") || lower.contains("5007") {
        EmbedError::Config(short)
    } else if lower.contains("input") && (lower.contains("too long") || lower.contains("exceed")) {
        EmbedError::Backend { status: 413, message: short }
    } else {
        // Unknown cause: status 0 means "not an HTTP status" and is retried.
        EmbedError::Backend { status: 0, message: short }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::embed::model_specs::workers_ai_model;

    #[test]
    fn request_shape() {
        let texts = vec!["a".to_string()];
        assert_eq!(serde_json::to_value(request(&texts)).unwrap(), serde_json::json!({"text": ["a"]}));
    }

    #[test]
    fn response_checked_against_model() {
        let dims = workers_ai_model("bge-small-en-v1.5").unwrap().dims;
        let ok: Response = serde_json::from_value(serde_json::json!({
            "shape": [1, 384], "data": [vec![0.5f32; 384]]
        }))
        .unwrap();
        assert_eq!(vectors(ok, dims, 1).unwrap().len(), 1);
        let wrong: Response =
            serde_json::from_value(serde_json::json!({"shape": [1, 3], "data": [[1, 2, 3]]})).unwrap();
        assert_eq!(vectors(wrong, dims, 1), Err(EmbedError::WrongDimension { expected: 384, got: 3 }));
        let short: Response =
            serde_json::from_value(serde_json::json!({"data": [vec![0.5f32; 384]]})).unwrap();
        assert_eq!(vectors(short, dims, 2), Err(EmbedError::WrongCount { expected: 2, got: 1 }));
    }

    #[test]
    fn errors_classified() {
        assert_eq!(classify_error("AiError: 3040: Capacity temporarily exceeded"), EmbedError::RateLimited);
        assert_eq!(classify_error("Error: 429 Too Many Requests"), EmbedError::RateLimited);
        assert_eq!(classify_error("AiError: request timed out"), EmbedError::Timeout);
        assert!(matches!(classify_error("AiError: 5007: No such model"), EmbedError::Config(_)));
        let other = classify_error("InferenceUpstreamError: boom");
        assert!(matches!(other, EmbedError::Backend { status: 0, .. }));
        assert!(other.is_retryable());
    }
}
