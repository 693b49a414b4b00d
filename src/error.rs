//! API errors: every failure leaves the worker as `{"error":{"code","message"}}` with a stable
//! machine-readable code and the right HTTP status. Bad input is always a 4xx; only a broken
//! dependency (D1, a queue) is a 5xx.
use edgerag_api::{ErrorBody, ErrorDetail};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{status} {code}: {message}")]
pub struct ApiError {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
    /// Seconds for a `Retry-After` header (429, 503).
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError { status, code, message: message.into(), retry_after: None }
    }

    pub fn retry_after(mut self, seconds: u64) -> ApiError {
        self.retry_after = Some(seconds);
        self
    }

    pub fn bad_request(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(400, code, message)
    }

    pub fn not_found(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(404, code, message)
    }

    pub fn too_large(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(413, code, message)
    }

    /// A dependency of the worker failed (D1, a queue). Logged with the detail, returned as 500.
    pub fn internal(context: &str, err: impl std::fmt::Display) -> ApiError {
        crate::log::error("internal_error", &[("context", context), ("detail", &err.to_string())]);
        ApiError::new(500, "INTERNAL", format!("{context} failed; see the worker logs"))
    }

    pub fn body(&self) -> ErrorBody {
        ErrorBody { error: ErrorDetail { code: self.code.to_string(), message: self.message.clone() } }
    }
}

/// Map a JSON body error to the right code: broken JSON vs. valid JSON of the wrong shape.
pub fn from_json_error(err: &serde_json::Error) -> ApiError {
    use serde_json::error::Category;
    match err.classify() {
        Category::Syntax | Category::Eof | Category::Io => {
            ApiError::bad_request("INVALID_JSON", format!("request body is not valid JSON: {err}"))
        }
        Category::Data => ApiError::bad_request("INVALID_REQUEST", format!("invalid request: {err}")),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn json_errors_are_classified() {
        let syntax = serde_json::from_str::<serde_json::Value>("{").unwrap_err();
        assert_eq!(from_json_error(&syntax).code, "INVALID_JSON");
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct S {
            a: u32,
        }
        let data = serde_json::from_str::<S>(r#"{"a":1,"b":2}"#).unwrap_err();
        assert_eq!(from_json_error(&data).code, "INVALID_REQUEST");
        assert_eq!(from_json_error(&data).status, 400);
    }
}
