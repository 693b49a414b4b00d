//! The body of every error answer (4xx/5xx), and of an MCP tool that fails.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `{"error": {"code", "message"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ErrorDetail {
    /// Stable, SCREAMING_SNAKE_CASE (e.g. `UNAUTHORIZED`, `INVALID_JSON`, `REPO_NOT_FOUND`).
    pub code: String,
    pub message: String,
}
