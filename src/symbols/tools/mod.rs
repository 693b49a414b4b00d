//! The repository tools an agent uses beside search — `repo.list_files`, `repo.outline`,
//! `repo.grep`, `repo.map`, `repo.impact` — called by the HTTP routes and the MCP tools alike.
//! Their logic is the search crate's ([`edgerag_search::repo_tools`]), over the
//! [`RepoStore`](edgerag_search::repo_tools::RepoStore) port; here it runs over the repository's
//! D1 database ([`d1::D1Repo`]). The same behaviour suite runs natively over the in-memory store
//! and, in the test build, over D1 ([`suite`]).
pub mod d1;
#[cfg(feature = "test-hooks")]
pub mod suite;

use edgerag_search::repo_tools::{self as tools, ToolError};

use crate::api::{
    GrepRequest, GrepResponse, ImpactRequest, ImpactResponse, ListFilesQuery, ListFilesResponse, MapRequest,
    MapResponse, OutlineQuery, OutlineResponse,
};
use crate::error::ApiError;
use crate::http::ApiResult;
use crate::symbols::RepoDb;

pub use edgerag_search::repo_tools::impact::MAX_DIFF_BYTES;

/// A tool's refusal as the API's error: its status and stable code; a store failure is a 500.
fn api_error(e: ToolError) -> ApiError {
    match e {
        ToolError::Request { status, code, message } => ApiError::new(status, code, message),
        ToolError::Store(e) => ApiError::internal("database", e),
    }
}

fn store(repo: &RepoDb) -> d1::D1Repo {
    d1::D1Repo { db: repo.db.clone() }
}

pub async fn list_files(repo: &RepoDb, query: &ListFilesQuery) -> ApiResult<ListFilesResponse> {
    tools::list::list_files(&store(repo), &repo.namespace, query).await.map_err(api_error)
}

pub async fn outline(repo: &RepoDb, query: &OutlineQuery) -> ApiResult<OutlineResponse> {
    tools::outline::outline(&store(repo), &repo.namespace, query).await.map_err(api_error)
}

pub async fn grep(repo: &RepoDb, request: &GrepRequest) -> ApiResult<GrepResponse> {
    tools::grep::grep(&store(repo), &repo.namespace, request).await.map_err(api_error)
}

pub async fn map(repo: &RepoDb, request: &MapRequest) -> ApiResult<MapResponse> {
    tools::map::map(&store(repo), &repo.namespace, request).await.map_err(api_error)
}

pub async fn impact(repo: &RepoDb, request: &ImpactRequest) -> ApiResult<ImpactResponse> {
    tools::impact::impact(&store(repo), &repo.namespace, request).await.map_err(api_error)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn refusals_keep_their_status_and_code_and_store_failures_are_500() {
        let e = api_error(ToolError::bad_request("INVALID_PATTERN", "bad"));
        assert_eq!((e.status, e.code), (400, "INVALID_PATTERN"));
        let e = api_error(ToolError::not_found("PATH_NOT_FOUND", "no"));
        assert_eq!((e.status, e.code), (404, "PATH_NOT_FOUND"));
        let e = api_error(ToolError::Store(edgerag_search::PortError::new("d1", "down")));
        assert_eq!(e.status, 500);
    }
}
