//! The one table of the repository's read tools: a call with its arguments ([`ToolCall`]) goes to
//! its tool and comes back as the tool's answer ([`ToolAnswer`]). The worker's MCP tools and HTTP
//! routes read the arguments their own way (an MCP call's object, a query string, a body) and
//! both answer through [`call`].
use serde::Serialize;

use super::store::{RepoStore, ToolResult};
use super::{
    grep, impact, list, map, navigation, outline, GrepRequest, GrepResponse, ImpactRequest, ImpactResponse,
    LinesQuery, ListFilesQuery, ListFilesResponse, MapRequest, MapResponse, OutlineQuery, OutlineResponse,
    ReferencesQuery, SymbolQuery,
};
use edgerag_api::routes::{FileLinesResponse, ReferencesResponse, SymbolsResponse};

/// One call of a repository tool, its arguments parsed.
#[derive(Debug, Clone)]
pub enum ToolCall {
    /// `repo.find_symbol`, `GET …/symbols`.
    FindSymbol(SymbolQuery),
    /// `repo.symbol_references`, `GET …/symbols/{id}/references`.
    SymbolReferences { id: String, query: ReferencesQuery },
    /// `repo.read_file_range`, `GET …/files/{path}/lines`.
    ReadFileRange { path: String, query: LinesQuery },
    /// `repo.list_files`, `GET …/tree`.
    ListFiles(ListFilesQuery),
    /// `repo.outline`, `GET …/outline`.
    Outline(OutlineQuery),
    /// `repo.grep`, `POST …/grep`.
    Grep(GrepRequest),
    /// `repo.map`, `POST …/map`.
    Map(MapRequest),
    /// `repo.impact`, `POST …/impact`.
    Impact(ImpactRequest),
}

/// A tool's answer; it serializes as the answer itself.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum ToolAnswer {
    Symbols(SymbolsResponse),
    References(ReferencesResponse),
    Lines(FileLinesResponse),
    Files(ListFilesResponse),
    Outline(OutlineResponse),
    Grep(GrepResponse),
    Map(MapResponse),
    Impact(ImpactResponse),
}

/// Runs `call` over the repository `namespace` of `store`.
pub async fn call(store: &dyn RepoStore, namespace: &str, call: &ToolCall) -> ToolResult<ToolAnswer> {
    Ok(match call {
        ToolCall::FindSymbol(q) => ToolAnswer::Symbols(navigation::find_symbols(store, namespace, q).await?),
        ToolCall::SymbolReferences { id, query } => {
            ToolAnswer::References(navigation::references(store, namespace, id, query).await?)
        }
        ToolCall::ReadFileRange { path, query } => {
            ToolAnswer::Lines(navigation::read_lines(store, namespace, path, query).await?)
        }
        ToolCall::ListFiles(q) => ToolAnswer::Files(list::list_files(store, namespace, q).await?),
        ToolCall::Outline(q) => ToolAnswer::Outline(outline::outline(store, namespace, q).await?),
        ToolCall::Grep(r) => ToolAnswer::Grep(grep::grep(store, namespace, r).await?),
        ToolCall::Map(r) => ToolAnswer::Map(map::map(store, namespace, r).await?),
        ToolCall::Impact(r) => ToolAnswer::Impact(impact::impact(store, namespace, r).await?),
    })
}
