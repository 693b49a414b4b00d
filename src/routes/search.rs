//! `POST /v1/search`, `/v1/search/simple`, `/v1/search/global`, `/v1/search/simple-global`.
use edgerag_search::SearchMode;
use serde_json::Value;
use worker::{Env, Request, Response};

use crate::auth::{Access, Need, RepoKeys, Target};
use crate::background::Background;
use crate::http::{self, reply, ApiResult};
use crate::search::{api_error, run};

/// Largest search request body.
pub const MAX_SEARCH_BODY: usize = 256 * 1024;

/// `POST /v1/search*`.
pub async fn post(
    req: &mut Request,
    env: &Env,
    access: &Access,
    background: &Background,
    mode: SearchMode,
) -> ApiResult<Response> {
    let bytes = http::read_body(req, MAX_SEARCH_BODY).await?;
    let body: Value = http::parse_json(req, &bytes, false)?;
    access.check(&need(mode, &body)).map_err(super::denied)?;
    let response = run(env, mode, &body, access, background).await.map_err(api_error)?;
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

/// A search that names its repository needs read access to it (a clear 403 instead of "not
/// found"); the others are limited to readable namespaces by [`run`].
pub fn need(mode: SearchMode, body: &Value) -> Need {
    match crate::auth::named_repo(body, RepoKeys::SEARCH) {
        Some((owner, name)) if !mode.is_global() => Need::Read(Target::Repo { owner, name }),
        _ => Need::Read(Target::Each),
    }
}
