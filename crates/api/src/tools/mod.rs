//! Arguments of the repository tools an agent uses beside search — `repo.list_files`,
//! `repo.outline`, `repo.grep`, `repo.map`, `repo.impact` — which are also the queries (or bodies)
//! of the worker's `/v1/repos/{owner}/{name}/tree`, `…/outline`, `…/grep`, `…/map` and `…/impact`
//! routes; their answers are in [`answers`]. As with [`crate::navigation`], the MCP `tools/list`
//! schemas are generated from these types. The tools' logic is the search crate's `repo_tools`.
//!
//! Every tool that returns text takes `maxTokens`: the answer's JSON, counted the way
//! `maxContextTokens` counts (`ceil(chars / 4)`), never exceeds it; what did not fit is left out
//! and the answer says `truncated: true`.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub mod answers;

pub use answers::*;

/// `GET /v1/repos/{owner}/{name}/tree` query, and the MCP `repo.list_files` arguments (which add
/// `repoOwner` / `repoName`).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListFilesQuery {
    /// Only files under this folder (`src/api`, no leading or trailing slash needed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// Only paths matching this glob (`**/*.rs`, `src/{a,b}/*.ts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glob: Option<String>,
    /// Only files of this language (`rust`, `python`, `markdown`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Page size (default 200, at most 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u32>,
    /// Files to skip (the `nextOffset` of the previous page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u32>,
    /// Largest answer in tokens (default 8000, 100..=100000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 100, max = 100_000))]
    pub max_tokens: Option<u32>,
}

/// `GET /v1/repos/{owner}/{name}/outline` query, and the MCP `repo.outline` arguments (which add
/// `repoOwner` / `repoName`).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OutlineQuery {
    /// A file (its symbols as a tree) or a folder (its files, each with its top-level symbols);
    /// empty or absent: the whole repository as a folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Folders only: files to skip (the `nextOffset` of the previous page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u32>,
    /// Largest answer in tokens (default 8000, 100..=100000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 100, max = 100_000))]
    pub max_tokens: Option<u32>,
}

/// `POST /v1/repos/{owner}/{name}/grep` body, and the MCP `repo.grep` arguments (which add
/// `repoOwner` / `repoName`). A read: a key with `read` on the repository may call it.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GrepRequest {
    /// What to find on a line: a literal string, or a regular expression with `regex: true`
    /// (Rust `regex` syntax: linear time, no backreferences or look-around).
    #[schemars(length(min = 1, max = 1000))]
    pub pattern: String,
    /// `pattern` is a regular expression (default: a literal string).
    #[serde(default)]
    pub regex: bool,
    /// Match case exactly (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_sensitive: Option<bool>,
    /// Only paths matching one of these globs (`src/**/*.rs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// Only files of these languages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub languages: Vec<String>,
    /// Lines of context before and after each match (default 0, at most 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 10))]
    pub context: Option<u32>,
    /// Matching lines per page (default 100, at most 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u32>,
    /// The `cursor` of the previous page's answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Largest answer in tokens (default 8000, 100..=100000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 100, max = 100_000))]
    pub max_tokens: Option<u32>,
}

/// `POST /v1/repos/{owner}/{name}/map` body, and the MCP `repo.map` arguments (which add
/// `repoOwner` / `repoName`). A read.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MapRequest {
    /// Rank files about this question first: files whose path or symbol names hold its words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 2000))]
    pub query: Option<String>,
    /// Rank files matching these globs first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// Rank files defining symbols of these names first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub symbols: Vec<String>,
    /// Largest answer in tokens (default 8000, 100..=100000): the map holds as many files as fit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 100, max = 100_000))]
    pub max_tokens: Option<u32>,
}

/// One changed file of a `repo.impact` call, with the lines changed (the whole file without them).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChangedRange {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub start_line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub end_line: Option<u32>,
}

/// `POST /v1/repos/{owner}/{name}/impact` body, and the MCP `repo.impact` arguments (which add
/// `repoOwner` / `repoName`): give `changes` or a unified `diff`. A read.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImpactRequest {
    /// Changed paths with line ranges.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<ChangedRange>,
    /// A unified diff (`git diff` output), at most 1 MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// Steps followed back from the changed symbols (default 3, at most 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 3))]
    pub depth: Option<u32>,
    /// Impacted symbols per page (default 50, at most 500).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u32>,
    /// Largest answer in tokens (default 8000, 100..=100000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 100, max = 100_000))]
    pub max_tokens: Option<u32>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_reject_unknown_fields() {
        assert!(serde_json::from_value::<ListFilesQuery>(json!({"prefx": "src"})).is_err());
        assert!(serde_json::from_value::<OutlineQuery>(json!({"path": "src", "x": 1})).is_err());
        let grep: GrepRequest =
            serde_json::from_value(json!({"pattern": "fn main", "paths": ["src/**"]})).unwrap();
        assert!(!grep.regex);
        assert!(serde_json::from_value::<GrepRequest>(json!({})).is_err());
    }
}
