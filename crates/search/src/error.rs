//! Errors of the read path. Each has a stable machine-readable code and an HTTP status so the
//! worker can answer `{ "error": { "code", "message" } }` without knowing the variants.
use serde::Serialize;

/// Why a search could not be answered.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize)]
#[serde(tag = "code", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SearchError {
    /// The request is not a JSON object, a field has the wrong type, or a value is unusable.
    #[error("{message}")]
    InvalidRequest { message: String },
    /// A field that is not part of the contract (and is not a known tuning parameter).
    #[error("unknown field `{field}`; accepted fields: {accepted}")]
    UnknownField { field: String, accepted: String },
    /// Raw tuning parameters are owned by the server's profiles, never by the caller.
    #[error(
        "tuning parameters are not accepted in the request ({fields}); choose a `profile` instead \
         (available: {profiles})"
    )]
    TuningParameterRejected { fields: String, profiles: String },
    /// `rawQuery` is missing or blank.
    #[error("`rawQuery` is required and must not be blank")]
    EmptyQuery,
    /// No namespace is READY (owner/name could not be filled), or the named one has no index.
    #[error("{message}")]
    IndexNotReady { message: String },
    /// `allowEmptyContext=false` and nothing relevant was found.
    #[error(
        "no indexed context matches the query and the profile `{profile}` does not allow an empty context"
    )]
    ContextNotFound { profile: String },
    /// Both retrievers failed (one failing alone degrades with a warning instead).
    #[error("search backends are unavailable: {message}")]
    BackendUnavailable { message: String },
}

impl SearchError {
    pub fn code(&self) -> &'static str {
        match self {
            SearchError::InvalidRequest { .. } => "INVALID_REQUEST",
            SearchError::UnknownField { .. } => "UNKNOWN_FIELD",
            SearchError::TuningParameterRejected { .. } => "TUNING_PARAMETER_REJECTED",
            SearchError::EmptyQuery => "EMPTY_QUERY",
            SearchError::IndexNotReady { .. } => "INDEX_NOT_READY",
            SearchError::ContextNotFound { .. } => "CONTEXT_NOT_FOUND",
            SearchError::BackendUnavailable { .. } => "SEARCH_BACKEND_UNAVAILABLE",
        }
    }

    /// The HTTP status the worker answers with.
    pub fn http_status(&self) -> u16 {
        match self {
            SearchError::InvalidRequest { .. }
            | SearchError::UnknownField { .. }
            | SearchError::TuningParameterRejected { .. }
            | SearchError::EmptyQuery => 400,
            SearchError::IndexNotReady { .. } | SearchError::ContextNotFound { .. } => 409,
            SearchError::BackendUnavailable { .. } => 503,
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        SearchError::InvalidRequest { message: message.into() }
    }
}

/// A failure inside a port implementation (D1, Vectorize, an HTTP model, ...).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{backend}: {message}")]
pub struct PortError {
    /// Which port failed, e.g. `keyword-index`, `chunk-store`, `generator`.
    pub backend: String,
    pub message: String,
}

impl PortError {
    pub fn new(backend: impl Into<String>, message: impl Into<String>) -> Self {
        PortError { backend: backend.into(), message: message.into() }
    }
}
