//! Answers of the repository tools; their arguments are in [`super`].
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `GET /v1/repos/{owner}/{name}/tree` (MCP `repo.list_files`): indexed files in path order.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct ListFilesResponse {
    pub files: Vec<ListedFile>,
    /// Files matching the filters, all pages together.
    pub total: u32,
    /// The `offset` of the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u32>,
    /// The page was cut short to fit `maxTokens` (`nextOffset` continues after the last file).
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct ListedFile {
    pub path: String,
    pub language: String,
    /// Bytes.
    pub size: u64,
    /// Lines as indexed.
    pub lines: u32,
}

/// `GET /v1/repos/{owner}/{name}/outline` (MCP `repo.outline`): a file's symbols as a tree, or a
/// folder's files with their top-level symbols, from the code graph.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct OutlineResponse {
    /// The path asked for (empty: the repository).
    pub path: String,
    /// `file` or `folder`.
    pub kind: OutlineKind,
    /// The file (one entry) or the folder's files in path order.
    pub files: Vec<OutlineFile>,
    /// Folders: the `offset` of the next page of files; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u32>,
    /// Symbols or files were left out to fit `maxTokens`.
    pub truncated: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OutlineKind {
    File,
    Folder,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct OutlineFile {
    pub path: String,
    pub language: String,
    /// A file: every symbol, nested under its parent; a folder's file: its top-level symbols.
    pub symbols: Vec<OutlineSymbol>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct OutlineSymbol {
    /// Symbol id (for `repo.symbol_references`).
    pub id: String,
    /// `CLASS`, `FUNCTION`, `METHOD`, `ENDPOINT`, …
    pub kind: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    pub start_line: u32,
    pub end_line: u32,
    /// The first line of its doc comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// Symbols it contains (a class's methods).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<OutlineSymbol>,
}

/// `POST /v1/repos/{owner}/{name}/grep` (MCP `repo.grep`): matching lines in path and line order.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct GrepResponse {
    pub matches: Vec<GrepMatch>,
    /// Files whose text was read (after the trigram index, when it applied, and the filters).
    pub files_scanned: u32,
    /// The trigram index picked the files to read (the pattern holds a literal of 3+ characters
    /// every match must contain); false: every file passing the filters was read.
    pub used_index: bool,
    /// The search stopped at `limit` matching lines; more may follow from `nextCursor`.
    pub limit_reached: bool,
    /// Pass as `cursor` to continue after the last match returned; absent when every file was
    /// searched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Matches were left out to fit `maxTokens` (`nextCursor` continues after the last one).
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct GrepMatch {
    pub path: String,
    /// 1-based line number.
    pub line: u32,
    /// The line as indexed (lines over 1000 characters are cut, ending with `…`).
    pub text: String,
    /// Up to `context` lines before it, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<String>,
    /// Up to `context` lines after it, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
}

/// `POST /v1/repos/{owner}/{name}/map` (MCP `repo.map`): the most important files, each with its
/// definitions as signatures (no bodies), most important first; the largest map that fits
/// `maxTokens`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct MapResponse {
    pub files: Vec<MapFile>,
    /// Files with a code graph in the repository.
    pub files_total: u32,
    /// `query`, `paths` or `symbols` matched something: the files are ranked by personalized
    /// PageRank from the files they matched.
    pub personalized: bool,
    /// Files were left out to fit `maxTokens`.
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct MapFile {
    pub path: String,
    /// The file's share of the repository's PageRank (the sum of its symbols'); in a
    /// personalized map, its personalized PageRank over the files' graph.
    pub rank: f64,
    /// Its definitions in line order.
    pub symbols: Vec<MapSymbol>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct MapSymbol {
    pub kind: String,
    /// The declaration without its body (the name when the graph has no signature).
    pub signature: String,
    pub line: u32,
}

/// `POST /v1/repos/{owner}/{name}/impact` (MCP `repo.impact`): what a change touches.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct ImpactResponse {
    /// Symbols whose lines the change touches.
    pub changed: Vec<ImpactSymbol>,
    /// Symbols calling, referencing, importing, extending or implementing them, transitively:
    /// nearest first, then by PageRank; this page.
    pub impacted: Vec<ImpactedSymbol>,
    /// HTTP endpoints among the changed and impacted symbols.
    pub endpoints: Vec<ImpactSymbol>,
    /// Test files holding a changed or impacted symbol.
    pub tests: Vec<String>,
    /// Impacted symbols, all pages together.
    pub total: u32,
    /// The `offset` of the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u32>,
    /// A step reached more than 2000 symbols and only the first were followed further.
    pub frontier_capped: bool,
    /// Impacted symbols were left out to fit `maxTokens` (`nextOffset` continues).
    pub truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct ImpactSymbol {
    pub id: String,
    pub kind: String,
    pub fqn: String,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    /// `ENDPOINT` only: the route as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
    /// `ENDPOINT` only: `GET`, `POST`, … or `ANY`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_method: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct ImpactedSymbol {
    pub symbol: ImpactSymbol,
    /// Steps from a changed symbol (1..=3).
    pub depth: u32,
    /// The edges that reached it, from a changed symbol's user outwards.
    pub via: Vec<ImpactEdge>,
}

/// An edge `from` → `to` (fully qualified names) of kind `kind`, written at `path:line`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct ImpactEdge {
    pub kind: String,
    pub from: String,
    pub to: String,
    pub path: String,
    pub line: u32,
}
