//! The request contract of the four search tools, as documented types (the JSON Schemas in
//! `schemas/` are generated from these). Parsing goes through [`crate::sanitize`], which reads
//! the raw JSON itself so it can fix, warn and reject with precise messages.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which tool is being called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SearchMode {
    /// `repo.rag_search` — `POST /v1/search`.
    Repo,
    /// `repo.rag_search_simple` — `POST /v1/search/simple`: only `rawQuery`, the last READY repo.
    Simple,
    /// `repo.rag_search_global` — `POST /v1/search/global`: every READY repo.
    Global,
    /// `repo.rag_search_simple_global` — `POST /v1/search/simple-global`.
    SimpleGlobal,
}

impl SearchMode {
    pub fn tool_name(self) -> &'static str {
        match self {
            SearchMode::Repo => "repo.rag_search",
            SearchMode::Simple => "repo.rag_search_simple",
            SearchMode::Global => "repo.rag_search_global",
            SearchMode::SimpleGlobal => "repo.rag_search_simple_global",
        }
    }

    pub fn is_global(self) -> bool {
        matches!(self, SearchMode::Global | SearchMode::SimpleGlobal)
    }

    pub fn is_simple(self) -> bool {
        matches!(self, SearchMode::Simple | SearchMode::SimpleGlobal)
    }
}

/// A string or a list of strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// Result filters. Each accepts one string or a list.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FiltersInput {
    /// Path globs (`src/**/*.ts`, `*.py`); `*` also crosses folders. Alias: `path`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths: Option<OneOrMany>,
    /// Languages by name or alias (`ts`, `py`, `golang`, `c#`, ...). Alias: `language`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub languages: Option<OneOrMany>,
    /// Tags attached at upload. Alias: `tag`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<OneOrMany>,
}

/// One turn of the conversation before the current question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Turn {
    /// `user` or `assistant`.
    pub role: String,
    pub content: String,
}

/// The conversation so far: a plain text, a list of texts (oldest first, alternating user /
/// assistant) or a list of `{role, content}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ConversationInput {
    Text(String),
    Texts(Vec<String>),
    Turns(Vec<Turn>),
}

/// `repo.rag_search` / `POST /v1/search`. Tuning parameters (`topK`, `minScore`, ...) are not
/// accepted: pick a `profile`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchRequest {
    /// Repository owner; filled from the last READY repository when absent. Alias: `repoOwner`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Repository name; filled from the last READY repository when absent. Alias: `repoName`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The question, as the user asked it. Alias: `query`.
    pub raw_query: String,
    /// `conservative`, `balanced`, `aggressive`, `legacy` or a configured one; default from the
    /// server configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Earlier turns, for follow-up questions. Alias: `history`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_context: Option<ConversationInput>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filters: Option<FiltersInput>,
    /// Overrides the profile's template for `instructions` (placeholders `{{rawQuery}}`,
    /// `{{repoOwner}}`, `{{repoName}}`, `{{locale}}`, `{{augmentedPrompt}}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_template: Option<String>,
    /// Overrides the profile: `false` makes "nothing found" an error (`CONTEXT_NOT_FOUND`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_empty_context: Option<bool>,
    /// Adds `debug` (plan, per-module timings) to the response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debug: Option<bool>,
}

/// `repo.rag_search_global` / `POST /v1/search/global`: every READY repository; the labels
/// replace owner/name in `instructions`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GlobalSearchRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_repo_owner: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_repo_name: Option<String>,
    pub raw_query: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_context: Option<ConversationInput>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filters: Option<FiltersInput>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_template: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_empty_context: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debug: Option<bool>,
}

/// `repo.rag_search_simple` and `repo.rag_search_simple_global`: only the question.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SimpleSearchRequest {
    pub raw_query: String,
}
