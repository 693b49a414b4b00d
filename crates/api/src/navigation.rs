//! Arguments of the code-navigation tools — `repo.find_symbol`, `repo.symbol_references`,
//! `repo.read_file_range` — which are also the query strings of the worker's
//! `/v1/repos/{owner}/{name}/symbols…` and `…/files/{path}/lines` routes. The MCP `tools/list`
//! schemas are generated from these types (the search crate's `mcp::tools_list`), so the two
//! cannot drift.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `GET /v1/repos/{owner}/{name}/symbols` query, and the MCP `repo.find_symbol` arguments (which
/// add `repoOwner` / `repoName`).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SymbolQuery {
    /// Exact `name` or fully qualified name (`app.util.slugify`) of the symbol.
    pub name: String,
    /// Symbol kind (`FUNCTION`, `CLASS`, `METHOD`, …), any case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Exact path, or a glob (`app/**/*.py`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Most symbols returned (default 20, at most 200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<u32>,
}

/// Which edges of a symbol to follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Symbols calling it.
    Callers,
    /// Symbols (or external names) it calls.
    Callees,
    /// Symbols extending or implementing it.
    Implementers,
    /// Symbols importing it.
    Importers,
    /// Symbols using it as a type (parameter, return, field or variable type, `new`, generic
    /// argument, annotation): `REFERENCES` edges into it.
    Referencers,
    /// The types it uses (`REFERENCES` edges out of it; external ones by name).
    Referenced,
}

/// `GET /v1/repos/{owner}/{name}/symbols/{id}/references` query, and the MCP
/// `repo.symbol_references` arguments (which add `repoOwner`, `repoName` and `id`).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReferencesQuery {
    /// `callers` (default), `callees`, `implementers`, `importers`, `referencers` (who uses this
    /// type) or `referenced` (the types it uses).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    /// 1 (default) or 2: also the references of the references.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 2))]
    pub depth: Option<u32>,
    /// Page size (default 50, at most 500).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u32>,
}

/// `GET /v1/repos/{owner}/{name}/files/{path}/lines` query, and the MCP `repo.read_file_range`
/// arguments (which add `repoOwner`, `repoName` and `path`).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LinesQuery {
    /// First line, 1-based.
    #[schemars(range(min = 1))]
    pub start: i64,
    /// Last line, inclusive.
    #[schemars(range(min = 1))]
    pub end: i64,
}
