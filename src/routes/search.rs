//! `POST /v1/search`, `/v1/search/simple`, `/v1/search/global`, `/v1/search/simple-global`.
use edgerag_search::SearchMode;
use serde_json::Value;
use worker::{Env, Request, Response};

use crate::config::Config;
use crate::http::{self, reply, ApiResult};
use crate::search::{api_error, run};

/// Largest search request body.
pub const MAX_SEARCH_BODY: usize = 256 * 1024;

/// `POST /v1/search*`.
pub async fn post(req: &mut Request, env: &Env, cfg: &Config, mode: SearchMode) -> ApiResult<Response> {
    http::require_read(req, cfg)?;
    let bytes = http::read_body(req, MAX_SEARCH_BODY).await?;
    let body: Value = http::parse_json(req, &bytes, false)?;
    let response = run(env, mode, &body).await.map_err(api_error)?;
    reply(200, &response)
}

/// `/v1/search/<rest>` → the tool.
pub fn mode_for(rest: &[&str]) -> Option<SearchMode> {
    match rest {
        [] => Some(SearchMode::Repo),
        ["simple"] => Some(SearchMode::Simple),
        ["global"] => Some(SearchMode::Global),
        ["simple-global"] => Some(SearchMode::SimpleGlobal),
        _ => None,
    }
}
