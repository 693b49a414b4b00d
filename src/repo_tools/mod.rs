//! The agent's read tools over one repository — code navigation (`repo.find_symbol`,
//! `repo.symbol_references`, `repo.read_file_range`) and `repo.list_files`, `repo.outline`,
//! `repo.grep`, `repo.map`, `repo.impact` — for the HTTP routes and the MCP tools alike. Their
//! logic is the search crate's ([`edgerag_search::repo_tools`]) over the
//! [`RepoStore`](edgerag_search::repo_tools::RepoStore) port, reached through its one table
//! ([`ToolCall`] → [`ToolAnswer`]); here it runs over the repository's D1 database ([`d1::D1Repo`]).
//! The same behaviour suite runs natively over the in-memory store and, in the test build, over
//! D1 ([`suite`]).
//!
//! A call goes: arguments read (an MCP call's object with [`mcp_call`], or a route's query string
//! or body) → the repository opened ([`open`], 404 `REPO_NOT_FOUND`) → the tool → its answer.
pub mod d1;
#[cfg(feature = "test-hooks")]
pub mod suite;

use edgerag_search::mcp::{self, Tool};
use edgerag_search::repo_tools::{self as tools, ToolError};
use serde_json::Value;

use crate::api::{LinesQuery, SymbolView};
use crate::error::ApiError;
use crate::http::{check_repo_part, ApiResult};
use crate::store::namespaces::{self, namespace_id};
use crate::store::{Db, Stores};

pub use edgerag_search::repo_tools::impact::MAX_DIFF_BYTES;
pub use edgerag_search::repo_tools::{ToolAnswer, ToolCall};

/// Arguments (a query string's or an MCP call's) as a request type: 400 `INVALID_REQUEST` on a
/// missing, unknown or mistyped field.
pub fn parse_args<T: serde::de::DeserializeOwned>(value: Value) -> ApiResult<T> {
    serde_json::from_value(value).map_err(|e| crate::error::from_json_error(&e))
}

/// A line range's arguments: as [`parse_args`], refused as 400 `BAD_RANGE`.
pub fn lines_args(value: Value) -> ApiResult<LinesQuery> {
    parse_args(value).map_err(|e| ApiError::bad_request("BAD_RANGE", e.message))
}

/// A checked repository and its database.
pub struct RepoDb {
    pub namespace: String,
    pub db: Db,
}

/// The repository's database; 404 `REPO_NOT_FOUND` when it was never indexed.
pub async fn open(stores: &Stores, owner: &str, name: &str) -> ApiResult<RepoDb> {
    check_repo_part("owner", owner)?;
    check_repo_part("name", name)?;
    let namespace = namespace_id(owner, name);
    let db = stores.for_namespace(&namespace).await?;
    if namespaces::get(&db, &namespace).await?.is_none() {
        // The same answer as the status route's for a repository never indexed.
        return Err(ApiError::not_found(
            "REPO_NOT_FOUND",
            format!("repository {owner}/{name} is not indexed"),
        ));
    }
    Ok(RepoDb { namespace, db })
}

/// A tool's refusal as the API's error: its status and stable code; a store failure is a 500.
fn api_error(e: ToolError) -> ApiError {
    match e {
        ToolError::Request { status, code, message } => ApiError::new(status, code, message),
        ToolError::Store(e) => ApiError::internal("database", e),
    }
}

/// Runs `call` over the repository `owner/name` (its arguments are read first, so a bad argument
/// is refused before the repository is looked up).
pub async fn answer(stores: &Stores, owner: &str, name: &str, call: &ToolCall) -> ApiResult<ToolAnswer> {
    let repo = open(stores, owner, name).await?;
    tools::call(&d1::D1Repo { db: repo.db }, &repo.namespace, call).await.map_err(api_error)
}

/// One symbol by id (`GET …/symbols/{id}`); 404 `UNKNOWN_SYMBOL`.
pub async fn symbol(stores: &Stores, owner: &str, name: &str, id: &str) -> ApiResult<SymbolView> {
    let repo = open(stores, owner, name).await?;
    tools::navigation::symbol(&d1::D1Repo { db: repo.db }, &repo.namespace, id).await.map_err(api_error)
}

/// An MCP repository tool's arguments — `repoOwner`, `repoName`, the route's path part (`id`,
/// `path`) and the tool's own — as the repository and the call: 400 `INVALID_REQUEST` (`BAD_RANGE`
/// for a line range) when they do not read.
pub fn mcp_call(tool: Tool, arguments: &Value) -> ApiResult<(String, String, ToolCall)> {
    let invalid = |m: String| ApiError::bad_request("INVALID_REQUEST", m);
    let (owner, name, mut rest) = mcp::repo_tool_args(arguments).map_err(invalid)?;
    let mut take = |key: &str| match rest.as_object_mut().and_then(|o| o.remove(key)) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        _ => Err(invalid(format!("give {key} (a non-empty string)"))),
    };
    let call = match tool {
        Tool::FindSymbol => ToolCall::FindSymbol(parse_args(rest)?),
        Tool::SymbolReferences => {
            let id = take("id")?;
            ToolCall::SymbolReferences { id, query: parse_args(rest)? }
        }
        Tool::ReadFileRange => {
            let path = take("path")?;
            ToolCall::ReadFileRange { path, query: lines_args(rest)? }
        }
        Tool::ListFiles => ToolCall::ListFiles(parse_args(rest)?),
        Tool::Outline => ToolCall::Outline(parse_args(rest)?),
        Tool::Grep => ToolCall::Grep(parse_args(rest)?),
        Tool::Map => ToolCall::Map(parse_args(rest)?),
        Tool::Impact => ToolCall::Impact(parse_args(rest)?),
        Tool::Search(_) | Tool::IndexStatus => {
            return Err(invalid(format!("{} is not a navigation tool", tool.name())))
        }
    };
    Ok((owner, name, call))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn refusals_keep_their_status_and_code_and_store_failures_are_500() {
        let e = api_error(ToolError::bad_request("INVALID_PATTERN", "bad"));
        assert_eq!((e.status, e.code), (400, "INVALID_PATTERN"));
        let e = api_error(ToolError::not_found("PATH_NOT_FOUND", "no"));
        assert_eq!((e.status, e.code), (404, "PATH_NOT_FOUND"));
        let e = api_error(ToolError::Store(edgerag_search::PortError::new("d1", "down")));
        assert_eq!(e.status, 500);
    }

    #[test]
    fn an_mcp_call_names_its_repository_and_its_path_part_apart_from_the_tools_arguments() {
        let repo = json!({"repoOwner": "acme", "repoName": "app"});
        let with = |extra: Value| {
            let mut args = repo.clone();
            args.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            args
        };
        let (owner, name, call) =
            mcp_call(Tool::SymbolReferences, &with(json!({"id": "abc", "depth": 2}))).unwrap();
        assert_eq!((owner.as_str(), name.as_str()), ("acme", "app"));
        assert!(
            matches!(call, ToolCall::SymbolReferences { id, query } if id == "abc" && query.depth == Some(2))
        );
        let e = mcp_call(Tool::SymbolReferences, &with(json!({"depth": 2}))).unwrap_err();
        assert_eq!((e.code, e.message.as_str()), ("INVALID_REQUEST", "give id (a non-empty string)"));
        let e = mcp_call(Tool::ReadFileRange, &with(json!({"path": "a.rs", "start": "x", "end": 2})))
            .unwrap_err();
        assert_eq!(e.code, "BAD_RANGE");
        let e = mcp_call(Tool::Grep, &with(json!({"pattern": "x", "nope": 1}))).unwrap_err();
        assert_eq!(e.code, "INVALID_REQUEST");
        let e = mcp_call(Tool::Outline, &json!({"repoOwner": "acme"})).unwrap_err();
        assert_eq!(e.code, "INVALID_REQUEST");
        assert!(mcp_call(Tool::IndexStatus, &repo).is_err());
        assert!(matches!(mcp_call(Tool::Map, &repo).unwrap().2, ToolCall::Map(_)));
    }
}
